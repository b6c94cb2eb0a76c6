"""Every known-wrong solution in the mutant corpus loses points on a named property.

A mutant is a whole exercise file at ``mutants/<topic>/<drill>/<mistake>.py``. Its
docstring says what mistake it makes; ``CAUGHT_BY`` names the properties (test
functions) that must not pass on it. The corpus is graded in rounds, once per
test session (``grader.tests.shared``): the k-th mutant of every drill together,
as one submission, graded on the properties their ``CAUGHT_BY`` name (each with
its full examples; a property that fails costs the drill its points, so that is
the claim to check). Drills are graded independently, so mutants cannot mask
each other.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from grader.core.results_json import Results
from grader.core.syllabus import exercise_tests
from grader.tests.grading import REPO, base_name, exercise, grade_properties
from grader.tests.shared import shared

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


def graded_round(k: int, factory: pytest.TempPathFactory) -> Results:
    """The k-th mutant of every drill that has one, graded as one submission on the
    properties their ``CAUGHT_BY`` name (without shrinking, which only changes the
    counterexample shown; in-process: they are the course's own files)."""
    def make(folder: Path) -> Results:
        properties = {}
        for drill, paths in BY_DRILL.items():
            if k < len(paths):
                target = folder / "submission" / f"{drill}.py"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(paths[k], target)
                properties[drill] = caught_by(paths[k])
        return grade_properties(folder / "submission", folder / "out", properties,
                                "--no-shrink", "--isolation", "none")

    return shared(factory, f"mutants-round{k}", make)


def test_every_drill_has_three_mutants():
    thin = {d: len(BY_DRILL.get(d, [])) for d in exercise_tests(REPO) if len(BY_DRILL.get(d, [])) < 3}
    assert not thin, f"drills with fewer than three mutants: {thin}"


def test_every_caught_by_names_a_property_of_its_drill():
    tests = exercise_tests(REPO)
    for drill, _, path in CASES:
        source = tests[drill].read_text()
        unknown = [p for p in caught_by(path) if f"def {p}(" not in source]
        assert not unknown, f"{path.name}: CAUGHT_BY names {unknown}, which {drill} does not have"


@pytest.mark.parametrize("drill,k,path", [pytest.param(d, k, p, id=f"{d}/{p.stem}") for d, k, p in CASES])
def test_mutant_loses_points(drill, k, path, tmp_path_factory):
    expected = caught_by(path)
    ex = exercise(graded_round(k, tmp_path_factory), drill)
    assert ex["score"] < ex["max_score"], f"{path.name} scored full marks on {drill}"
    outcomes: dict[str, set[str]] = {}
    for t in ex["tests"]:
        outcomes.setdefault(base_name(t["name"]), set()).add(t["outcome"])
    for prop in expected:
        assert prop in outcomes, f"{path.name}: CAUGHT_BY names {prop}, which {drill} does not have"
        assert outcomes[prop] & {"failed", "error", "timed_out"}, (
            f"{path.name}: expected {prop} to catch it, but its outcomes were {outcomes[prop]}")
