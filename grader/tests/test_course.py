"""course.toml: the one list of drills in order, their hints, and how names resolve."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import cast

import pytest

from grader.core import hints, syllabus
from grader.core.errors import UsageError
from grader.intake.submission import open_submission
from grader.reports import student_report, table
from grader.tests.grading import REPO
from grader.tests.sample_results import mixed_results


@pytest.fixture(scope="module")
def the_course() -> syllabus.Course:
    return syllabus.load(REPO)


def test_course_toml_and_the_test_files_name_the_same_drills():
    assert sorted(syllabus.listed_ids(REPO)) == sorted(syllabus.exercise_tests(REPO))


def test_the_course_order_is_the_toml_order(the_course):
    assert the_course.ids == syllabus.listed_ids(REPO)
    assert the_course.ids[:2] == ["tensors/contiguity", "tensors/broadcast"]
    assert [t.name for t in the_course.topics] == ["tensors", "nn", "autograd", "losses", "attention", "data",
                                                   "distributed", "speed", "training"]


def test_every_drill_has_at_least_two_distinct_hints(the_course):
    for drill in the_course.drills:
        assert len(drill.hints) >= 2, drill.id
        assert len(set(drill.hints)) == len(drill.hints), drill.id


def test_no_hint_quotes_a_line_of_reference_code(the_course):
    lines = set()
    for path in (REPO / "reference").rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {cast(ast.Expr, n.body[0]).value.lineno for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef)) and ast.get_docstring(n)}
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.strip()
            if len(code) >= 30 and not code.startswith("#") and number not in docstrings:
                lines.add(code)
    for drill in the_course.drills:
        for hint in drill.hints:
            assert not [line for line in lines if line in hint], drill.id


def test_points_and_titles_are_read_from_the_test_modules(the_course):
    facts = {d: syllabus.drill_facts(REPO, d) for d in the_course.ids}
    assert facts["tensors/one_hot"]["points"] == 10
    assert facts["training/gan"]["points"] == 15
    # the first 24 drills (275), then issue 29: autograd/* 35, nn/batch_norm_stats 15, speed/lr_warmup 10,
    # tensors/indexing 10, data/* 20, speed/grad_scaler and speed/checkpoint 30
    assert sum(f["points"] for f in facts.values()) == 275 + 35 + 15 + 10 + 10 + 20 + 30 + 110  # the last: issue 40's ten drills
    assert facts["tensors/one_hot"]["title"].startswith("One-hot")


@pytest.mark.parametrize("typed", [
    "tensors/one_hot", "one_hot", " one_hot ", "exercises/tensors/one_hot.py", "tensors/one_hot.py",
    str(REPO / "exercises" / "tensors" / "one_hot.py"), "tests/tensors/test_one_hot.py",
    "reference/tensors/one_hot.py", "one_hot.py", "test_one_hot.py",
])
def test_a_drill_is_named_by_id_short_name_or_file(the_course, typed):
    assert the_course.resolve(typed) == "tensors/one_hot"


@pytest.mark.parametrize("typed, meant", [
    ("onehot", "one_hot"), ("one_hat", "one_hot"), ("tensors/onehot", "one_hot"),
    ("exercises/tensors/onehot.py", "one_hot"), ("Conv2D", "conv2d"), ("layernorm", "layer_norm"),
])
def test_an_unknown_drill_says_did_you_mean(the_course, typed, meant):
    with pytest.raises(syllabus.CourseError) as err:
        the_course.resolve(typed)
    assert str(err.value) == f"unknown drill {typed}: did you mean {meant}?"


def test_an_unknown_drill_like_none_names_the_drills(the_course):
    with pytest.raises(syllabus.CourseError, match=r"unknown drill zzz; the 44 drills are contiguity, "
                                                 r"broadcast, .*, gan \(`torchdrill list` shows them\)"):
        the_course.resolve("zzz")


def test_a_missing_absolute_folder_is_named_once(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    with pytest.raises(UsageError) as err:
        open_submission(str(missing), REPO)
    assert str(err.value) == f"submission {missing} does not exist"
    monkeypatch.chdir(REPO)  # a relative name where the current folder is the course: one place
    with pytest.raises(UsageError) as err:
        open_submission("nowhere", REPO)
    assert str(err.value) == "submission nowhere does not exist"
    monkeypatch.chdir(tmp_path)  # elsewhere: both places it looked
    with pytest.raises(UsageError) as err:
        open_submission("nowhere", REPO)
    assert str(err.value) == (f"submission nowhere does not exist (looked for {tmp_path / 'nowhere'} "
                              f"and {REPO / 'nowhere'})")


def test_an_ambiguous_short_name_is_refused(tmp_path):
    _course(tmp_path, {"a": ["x"], "b": ["x"]})
    with pytest.raises(syllabus.CourseError, match="ambiguous: say which of a/x, b/x"):
        syllabus.load(tmp_path).resolve("x")


def _course(root: Path, topics: dict[str, list[str]], toml: str | None = None) -> None:
    for topic, names in topics.items():
        for name in names:
            path = root / "tests" / topic / f"test_{name}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('"""A drill."""\nimport pytest\npytestmark = pytest.mark.exercise(points=4)\n')
    (root / "tests" / "conftest.py").write_text("")
    if toml is not None:
        (root / "course.toml").write_text(toml)


def test_without_course_toml_the_drills_come_from_the_tests(tmp_path):
    _course(tmp_path, {"b": ["z", "y"], "a": ["x"]})
    loaded = syllabus.load(tmp_path)
    assert loaded.ids == ["a/x", "b/y", "b/z"]
    assert all(not d.hints for d in loaded.drills)


def test_a_tested_drill_missing_from_course_toml_is_listed_last(tmp_path):
    _course(tmp_path, {"a": ["x", "y"]}, '[[topics]]\nname = "a"\n[[topics.drills]]\nname = "y"\n'
                                         'hints = ["one", "two"]\n')
    loaded = syllabus.load(tmp_path)
    assert loaded.ids == ["a/y", "a/x"]
    assert loaded.drill("a/y").hints == ("one", "two")


@pytest.mark.parametrize("toml, message", [
    ("[[topics]\n", "cannot read"),
    ('topics = "tensors"\n', "'topics' of the course must be a list of tables"),
    ('[[topics]]\ntitle = "no name"\n', "topic 1 needs a name"),
    ('[[topics]]\nname = "a"\n[[topics.drills]]\nname = "x"\nhints = "one"\n',
     "the hints of drill a/x must be a list of non-empty strings"),
    ('[[topics]]\nname = "a"\n[[topics.drills]]\nname = "x"\n[[topics.drills]]\nname = "x"\n',
     "lists drill a/x more than once"),
])
def test_a_broken_course_toml_is_one_clear_sentence(tmp_path, toml, message):
    _course(tmp_path, {"a": ["x"]}, toml)
    with pytest.raises(syllabus.CourseError, match=message) as info:
        syllabus.load(tmp_path)
    assert str(tmp_path / "course.toml") in str(info.value)


def test_annotate_orders_exercises_and_records_hints(tmp_path):
    results = {"exercises": [{"id": i} for i in ("training/gan", "tensors/one_hot", "zz/extra",
                                                    "tensors/contiguity")]}
    (tmp_path / hints.HINTS_FILE).write_text(json.dumps({"schema": 1, "revealed": {"tensors/one_hot": 2}}))
    syllabus.annotate(results, REPO, hints.revealed(tmp_path))
    assert [e["id"] for e in results["exercises"]] == ["tensors/contiguity", "tensors/one_hot",
                                                       "training/gan", "zz/extra"]
    assert [e["hints_used"] for e in results["exercises"]] == [0, 2, 0, 0]


def test_hints_used_show_in_the_report_and_the_table(tmp_path):
    results = mixed_results()
    results["exercises"][0]["hints_used"] = 2
    assert "2 hints used" in student_report.render_html(results, REPO)
    out = tmp_path / "table.txt"
    with out.open("w") as f:
        table.render(results, file=f)
    assert "(2 hints)" in out.read_text()


def test_a_handout_folder_is_graded_through_its_exercises(tmp_path):
    (tmp_path / "exercises" / "tensors").mkdir(parents=True)
    (tmp_path / "exercises" / "tensors" / "one_hot.py").write_text("def one_hot(x, n):\n    return x\n")
    (tmp_path / "course.toml").write_text("")
    assert open_submission(str(tmp_path), REPO).folder == (tmp_path / "exercises").resolve()
