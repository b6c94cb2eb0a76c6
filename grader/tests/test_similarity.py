"""Similarity evidence: disguised copies are flagged and independent correct solutions are
not, on every drill (no grading: the analysis alone), and ``grade-all`` on a small class
shows both kinds of evidence in class.html and similarity.csv."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.classroom import similarity
from grader.core import notebooks
from grader.core.stubs import stub_source
from grader.tests.classroom import disguise, drills, with_secret
from grader.tests.grading import REPO
from grader.tests.shared import shared

INDEPENDENT = REPO / "grader" / "tests" / "data" / "similarity"  # correct solutions written apart
ONLY = ["tensors/one_hot", "tensors/contiguity"]


def reference(drill: str) -> str:
    return (REPO / "reference" / f"{drill}.py").read_text()


def stub(drill: str) -> str:
    return stub_source((REPO / "exercises" / f"{drill}.py").read_text())


def pair(found: dict[str, Any], a: str, b: str) -> dict[str, Any] | None:
    return next((p for p in found["top"] if {p["a"], p["b"]} == {a, b}), None)


@pytest.mark.parametrize("drill", drills())
def test_a_disguised_copy_is_flagged_and_an_independent_solution_is_not(drill):
    code = {"original": reference(drill), "copy": disguise(reference(drill), seed=3)}
    if (INDEPENDENT / f"{drill}.py").is_file():
        code["independent"] = (INDEPENDENT / f"{drill}.py").read_text()
    found = similarity.analyse({sid: {"exercises": []} for sid in code},
                               {sid: {f"{drill}.py": text} for sid, text in code.items()},
                               {drill: stub(drill)}, drills=[drill])["code"][drill]
    copied = pair(found, "original", "copy")
    assert copied is not None and copied["flagged"], f"{drill}: {copied}"
    assert copied["score"] >= similarity.DEFAULT_THRESHOLD + 0.1  # a margin, not a coin toss
    for other in ("original", "copy"):
        independent = pair(found, other, "independent")
        assert independent is None or not independent["flagged"]


def test_hashes_are_the_same_in_every_process():
    code = reference("tensors/one_hot")
    here = similarity.kgram_hashes(similarity.filtered(code)[0]).tolist()
    there = subprocess.run([sys.executable, "-c", "from grader.classroom import similarity as s; "
                            f"print(s.kgram_hashes(s.filtered({code!r})[0]).tolist())"],
                           capture_output=True, text=True, check=True, cwd=REPO, env={"PYTHONHASHSEED": "7"})
    assert here and str(here) == there.stdout.strip()


def test_what_the_stub_gives_and_what_most_share_is_no_evidence():
    drill = "tensors/one_hot"
    only_stub = stub(drill).replace("raise NotImplementedError", "return labels", 1)
    found = similarity.code_pairs(drill, {"a": similarity.canonical(only_stub),
                                          "b": similarity.canonical(only_stub.replace("labels", "x"))},
                                  similarity.canonical(stub(drill)))
    assert not found["top"] or not any(p["flagged"] for p in found["top"])
    # in a class of 12, code 11 of them share is common knowledge, not copying
    same = {f"s{i:02d}": similarity.canonical(disguise(reference(drill), seed=i)) for i in range(11)}
    same["odd"] = similarity.canonical((INDEPENDENT / f"{drill}.py").read_text())
    found = similarity.code_pairs(drill, same, similarity.canonical(stub(drill)))
    assert found["common_fingerprints"] > 0 and found["flagged"] == 0


# ------------------------------------------------------------------ in grade-all

def _class(folder: Path) -> None:
    def put(student: str, files: dict[str, str]) -> None:
        for drill, code in files.items():
            path = folder / student / f"{drill}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)

    mutant = (REPO / "grader" / "tests" / "mutants" / "tensors" / "one_hot" / "classes_is_max.py").read_text()
    put("alice", {d: reference(d) for d in ONLY})
    put("bob", {d: disguise(reference(d), seed=7) for d in ONLY})
    put("carol", {d: (INDEPENDENT / f"{d}.py").read_text() for d in ONLY})
    put("dave", {"tensors/one_hot": mutant})
    put("frank", {"tensors/one_hot": disguise(mutant, seed=5) + '\nNOTE = "</pre><script>alert(1)</script>"\n'})
    cells = [("markdown", "# drills")] + [("code", (INDEPENDENT / f"{d}.py").read_text()) for d in ONLY]
    (folder / "erin.ipynb").write_text(notebooks.dumps_cells(cells))  # carol's code, in a notebook


@pytest.fixture
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def make(root: Path) -> dict[str, Any]:
        _class(root / "submissions")
        proc = subprocess.run([sys.executable, "-m", "grader", "grade-all", str(root / "submissions"),
                               "--out", str(root / "out"), "--course", str(REPO), "--workers", "2",
                               "--only", *ONLY, "--profile", "torchdrill-quick", "--no-shrink"],
                              capture_output=True, text=True, timeout=600, cwd=REPO, env=with_secret())
        return {"out": str(root / "out"), "returncode": proc.returncode, "log": proc.stdout + proc.stderr}

    return shared(tmp_path_factory, "similarity-class", make)


def test_grade_all_flags_the_copies_and_not_the_independent_work(graded):
    assert graded["returncode"] == 0, graded["log"]
    out = Path(graded["out"])
    rows = list(csv.DictReader((out / "similarity.csv").open()))
    flagged = {(r["drill"], r["evidence"], frozenset((r["student_a"], r["student_b"])))
               for r in rows if r["flagged"] == "yes"}
    for drill in ONLY:
        assert (drill, "code", frozenset(("alice", "bob"))) in flagged
    assert ("tensors/one_hot", "code", frozenset(("dave", "frank"))) in flagged
    for other in ("alice", "bob"):
        assert not any(frozenset((other, "carol")) == f[2] for f in flagged)
    # erin handed in carol's code as a notebook: the same code, whatever the format
    assert ("tensors/contiguity", "code", frozenset(("carol", "erin"))) in flagged
    behaviour = [r for r in rows if r["evidence"] == "behaviour"]
    assert {frozenset((r["student_a"], r["student_b"])) for r in behaviour} == {frozenset(("dave", "frank"))}
    assert "rare wrong answer" in behaviour[0]["detail"]
    assert "similarity: " in graded["log"] and "flagged for a look" in graded["log"]


def test_the_class_report_shows_the_pairs_side_by_side_escaped(graded):
    out = Path(graded["out"])
    page = (out / "class.html").read_text()
    assert 'id="similarity"' in page and 'href="#similarity"' in page
    assert 'data-a="alice" data-b="bob" data-kind="code" data-flagged="yes"' in page
    assert "<mark>" in page and "never a penalty" in page
    assert "<script>alert(1)" not in page and "&lt;/pre&gt;&lt;script&gt;alert(1)" in page  # frank's code, escaped
    stored = json.loads((out / "similarity.json").read_text())
    assert stored["settings"]["threshold"] == similarity.DEFAULT_THRESHOLD
    erin = json.loads((out / "students" / "erin" / "results.json").read_text())
    by_id = {e["id"]: e for e in erin["exercises"]}
    assert [f["cell"] for f in by_id["tensors/contiguity"]["source"]["functions"]] == [3, 3]
    assert by_id["tensors/one_hot"]["source"]["functions"][0]["cell"] == 2
