"""Every known-wrong solution in the mutant corpus loses points on a named property.

A mutant is a whole exercise file at ``mutants/<topic>/<drill>/<mistake>.py``. Its
docstring says what mistake it makes; ``CAUGHT_BY`` names the properties (test
functions) that must not pass on it. Mutants are graded in rounds (the k-th
mutant of every drill together, as one submission) to start the grader fewer
times; drills are graded independently, so mutants cannot mask each other.
"""

from __future__ import annotations

import ast
import shutil
from functools import cache
from pathlib import Path

import pytest

from grader.tests.grading import base_name, exercise, run_grade

MUTANTS = Path(__file__).parent / "mutants"


def _mutants() -> dict[str, list[Path]]:
    by_drill: dict[str, list[Path]] = {}
    for path in sorted(MUTANTS.rglob("*.py")):
        drill = path.parent.relative_to(MUTANTS).as_posix()
        by_drill.setdefault(drill, []).append(path)
    return by_drill


BY_DRILL = _mutants()
CASES = [(drill, k, path) for drill, paths in BY_DRILL.items() for k, path in enumerate(paths)]


def caught_by(path: Path) -> tuple[str, ...]:
    """The mutant file's ``CAUGHT_BY`` tuple, read without importing it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CAUGHT_BY" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError(f"{path} has no CAUGHT_BY = (...) naming the properties that catch it")


@cache
def graded_round(k: int, drills: tuple[str, ...], tmp_root: Path) -> dict:
    """Grade the k-th mutant of each of ``drills`` as one submission."""
    name = f"round{k}-" + "-".join(d.replace("/", ".") for d in drills)[:80]
    submission = tmp_root / name / "submission"
    for drill in drills:
        target = submission / f"{drill}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BY_DRILL[drill][k], target)
    # Whether a property fails does not depend on shrinking (test_self_check proves the
    # outcomes equal), so the corpus is graded without it: the rounds are most of CI's time.
    # Mutants are the course's own files: graded in-process (the sandbox is proved on the
    # reference and the adversarial corpus), which keeps the longest self-check short.
    return run_grade(submission, tmp_root / name / "out", "--no-shrink", "--isolation", "none",
                     "--only", *drills)


def selected_drills(k: int, session: pytest.Session) -> tuple[str, ...]:
    """The drills whose k-th mutant this session runs (all of them unless ``-k`` narrows it)."""
    return tuple(sorted({item.callspec.params["drill"] for item in session.items
                         if item.originalname == "test_mutant_loses_points"
                         and item.callspec.params["k"] == k}))


def test_every_drill_has_three_mutants():
    from grader.cli import exercise_tests
    from grader.tests.grading import REPO
    thin = {d: len(BY_DRILL.get(d, [])) for d in exercise_tests(REPO) if len(BY_DRILL.get(d, [])) < 3}
    assert not thin, f"drills with fewer than three mutants: {thin}"


@pytest.mark.parametrize(
    "drill,k,path",
    [pytest.param(d, k, p, id=f"{d}/{p.stem}", marks=pytest.mark.xdist_group(f"round{k}"))
     for d, k, p in CASES])
def test_mutant_loses_points(drill, k, path, tmp_path_factory, request):
    expected = caught_by(path)
    results = graded_round(k, selected_drills(k, request.session), tmp_path_factory.getbasetemp())
    ex = exercise(results, drill)
    assert ex["score"] < ex["max_score"], f"{path.name} scored full marks on {drill}"
    outcomes = {}
    for t in ex["tests"]:
        outcomes.setdefault(base_name(t["name"]), set()).add(t["outcome"])
    for prop in expected:
        assert prop in outcomes, f"{path.name}: CAUGHT_BY names {prop}, which {drill} does not have"
        assert outcomes[prop] & {"failed", "error", "timed_out"}, (
            f"{path.name}: expected {prop} to catch it, but its outcomes were {outcomes[prop]}")
