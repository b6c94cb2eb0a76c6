"""Official gradings draw examples no student has seen (``grader.core.course_secret``).

A learner holds every public test and can replay its derandomized examples: an
answer that looks them up in a table, or that is right only within the ranges the
public strategies draw, scores full marks in the public run. Given the course
secret, a grading seeds each property from the secret and draws from wider ranges:
those answers lose there, the reference does not, the same secret gives the same
examples, and another secret other ones.
"""

from __future__ import annotations

import ast
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from grader.core import course_secret
from grader.core.errors import UsageError
from grader.tests.grading import exercise, grade_properties

ONE_HOT = "tensors/one_hot"
PROPERTIES = {ONE_HOT: ["test_matches_f_one_hot_given_classes", "test_dtype_is_int64"]}
SECRET_A = "course-secret-a-0123456789abcdef"
SECRET_B = "course-secret-b-0123456789abcdef"

# A correct one_hot that writes down every input it is given (in-process grading only).
RECORDER = '''
import torch


def one_hot(labels, num_classes=-1):
    with open(@@LOG@@, "a") as log:
        log.write(repr((labels.dtype.itemsize, tuple(labels.shape), labels.tolist(), num_classes)) + "\\n")
    labels = labels.long()
    if num_classes == -1:
        num_classes = int(labels.max()) + 1
    return torch.zeros(*labels.shape, num_classes, dtype=torch.int64).scatter_(-1, labels.unsqueeze(-1), 1)
'''

# The replay attack: the answers to the public inputs, looked up; zeros for anything else.
REPLAY = '''
import torch

TABLE = @@TABLE@@


def one_hot(labels, num_classes=-1):
    key = repr((labels.dtype.itemsize, tuple(labels.shape), labels.tolist(), num_classes))
    if key not in TABLE:
        return torch.zeros(*labels.shape, max(num_classes, 1), dtype=torch.int64)
    labels = labels.long()
    n = num_classes if num_classes != -1 else int(labels.max()) + 1
    return torch.zeros(*labels.shape, n, dtype=torch.int64).scatter_(-1, labels.unsqueeze(-1), 1)
'''

# Right within the public ranges (at most 6 classes), wrong past them.
NARROW = '''
import torch


def one_hot(labels, num_classes=-1):
    labels = labels.long()
    n = num_classes if num_classes != -1 else int(labels.max()) + 1
    out = torch.zeros(*labels.shape, n, dtype=torch.int64).scatter_(-1, labels.unsqueeze(-1), 1)
    return out if n <= 6 else torch.zeros_like(out)
'''


def _submission(root: Path, source: str) -> Path:
    (root / "tensors").mkdir(parents=True)
    (root / "tensors" / "one_hot.py").write_text(source)
    return root


def _secret_file(folder: Path, text: str) -> Path:
    path = folder / f"secret-{text[-4:]}-{text[14]}"
    path.write_text(text + "\n")
    return path


def _grade(tmp: Path, name: str, submission: Path, *args: str) -> dict[str, Any]:
    results = grade_properties(submission, tmp / name, PROPERTIES, "--isolation", "none", *args)
    return exercise(results, ONE_HOT)


def _recorded(tmp: Path, name: str, *args: str) -> list[str]:
    log = tmp / f"{name}.log"
    submission = _submission(tmp / f"{name}-recorder", RECORDER.replace("@@LOG@@", repr(str(log))))
    graded = _grade(tmp, name, submission, *args)
    assert graded["score"] == graded["max_score"], graded
    return log.read_text().splitlines()


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The inputs one_hot was given: publicly, twice with secret A, once with B."""
    tmp = tmp_path_factory.mktemp("secret")
    a, b = _secret_file(tmp, SECRET_A), _secret_file(tmp, SECRET_B)
    return {"tmp": tmp, "a_file": a,
            "public": _recorded(tmp, "public"),
            "a": _recorded(tmp, "a", "--secret-file", str(a)),
            "a_again": _recorded(tmp, "a-again", "--secret-file", str(a)),
            "b": _recorded(tmp, "b", "--secret-file", str(b))}


def test_the_same_secret_draws_the_same_examples_and_another_other_ones(drawn):
    assert drawn["a"] == drawn["a_again"]
    assert drawn["a"] != drawn["public"]
    assert drawn["a"] != drawn["b"]
    public, official = set(drawn["public"]), set(drawn["a"])
    assert len(official - public) > len(official) // 2, "the official examples are mostly new"


def test_official_ranges_are_wider(drawn):
    def most_classes(lines: list[str]) -> int:
        return max(ast.literal_eval(line)[3] for line in lines)

    assert most_classes(drawn["public"]) <= 6
    assert most_classes(drawn["a"]) > 6


def test_a_table_of_the_public_examples_earns_nothing_officially(drawn, tmp_path):
    table = sorted(set(drawn["public"]))
    replay = _submission(tmp_path / "replay", REPLAY.replace("@@TABLE@@", repr(frozenset(table))))
    public = _grade(tmp_path, "replay-public", replay)
    assert public["score"] == public["max_score"], "the attack works on the public examples"
    official = _grade(tmp_path, "replay-official", replay, "--secret-file", str(drawn["a_file"]))
    assert official["score"] == 0, official


def test_an_answer_tuned_to_the_public_ranges_loses_officially(drawn, tmp_path):
    narrow = _submission(tmp_path / "narrow", NARROW)
    public = _grade(tmp_path, "narrow-public", narrow)
    assert public["score"] == public["max_score"], "right on every public example"
    official = _grade(tmp_path, "narrow-official", narrow, "--secret-file", str(drawn["a_file"]))
    assert official["score"] < official["max_score"], official
    assert any(t["outcome"] == "failed" for t in official["tests"])


def test_results_name_the_secret_by_its_digest_only(drawn):
    results = json.loads((drawn["tmp"] / "a" / "results.json").read_text())
    examples = results["environment"]["examples"]
    assert examples["drawn"] == "secret"
    assert examples["secret"] == course_secret.parse(SECRET_A, "test").digest
    assert SECRET_A not in json.dumps(results)
    public = json.loads((drawn["tmp"] / "public" / "results.json").read_text())
    assert public["environment"]["examples"] == {"drawn": "public"}


def test_public_examples_wins_over_a_secret(tmp_path, drawn):
    again = _recorded(tmp_path, "forced-public", "--secret-file", str(drawn["a_file"]), "--public-examples")
    assert again == drawn["public"]


# ------------------------------------------------------------------ the secret itself

def test_a_new_secret_is_private_and_never_replaced(tmp_path):
    path = tmp_path / "conf" / "secret"
    made = course_secret.create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert course_secret.read(path) == made and len(made.text) >= 40
    with pytest.raises(UsageError, match="already holds a course secret"):
        course_secret.create(path)
    assert course_secret.read(path) == made
    assert made.text not in repr(made) and made.text not in made.digest


@pytest.mark.parametrize(("text", "why"), [("short", "at least 16 characters"),
                                           ("one line is not\ntwo lines at all", "one line"),
                                           ("   ", "at least 16 characters")])
def test_a_bad_secret_is_refused_naming_its_file(tmp_path, text, why):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(UsageError, match=why) as caught:
        course_secret.read(path)
    assert str(path) in str(caught.value)


def test_a_missing_secret_file_is_named(tmp_path):
    with pytest.raises(UsageError, match="cannot read the course secret"):
        course_secret.read(tmp_path / "nowhere")


def test_the_environment_variable_is_the_secret_itself(tmp_path):
    assert course_secret.given(None, {}) is None
    from_env = course_secret.given(None, {course_secret.ENV: SECRET_A})
    assert from_env is not None and from_env.text == SECRET_A
    file = _secret_file(tmp_path, SECRET_B)
    chosen = course_secret.given(file, {course_secret.ENV: SECRET_A})
    assert chosen is not None and chosen.text == SECRET_B  # the flag first


def test_seeds_differ_by_property_and_by_secret():
    a, b = course_secret.parse(SECRET_A, "a"), course_secret.parse(SECRET_B, "b")
    assert a.seed("x::f") == a.seed("x::f")
    assert len({a.seed("x::f"), a.seed("x::g"), b.seed("x::f")}) == 3


def test_the_default_place_is_the_users_configuration(tmp_path):
    assert course_secret.default_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "torchdrill" / "secret"
    assert course_secret.default_path({"HOME": str(tmp_path)}) == tmp_path / ".config" / "torchdrill" / "secret"
    assert os.sep in str(course_secret.default_path())


def test_the_secret_command_makes_one_and_keeps_it(tmp_path, capsys, monkeypatch):
    from grader.cli import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert main(["secret"]) == 0
    kept = tmp_path / "torchdrill" / "secret"
    made = course_secret.read(kept)
    said = capsys.readouterr().out
    assert str(kept) in said and made.digest in said and made.text not in said
    assert main(["secret"]) == 2 and "already holds a course secret" in capsys.readouterr().err
    assert course_secret.read(kept) == made
    elsewhere = tmp_path / "elsewhere"
    assert main(["secret", "--out", str(elsewhere)]) == 0 and course_secret.read(elsewhere) != made
