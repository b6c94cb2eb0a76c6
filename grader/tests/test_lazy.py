"""Every point is earned: no do-nothing answer scores anything.

The do-nothing corpus is whole exercise files at ``lazy/<topic>/<drill>/<variant>.py``,
answers that are wrong on every ordinary input: ``zeros`` (right type, shape and dtype,
constant content), ``raises`` (the spec's exception on every call), ``echo`` (the input
handed back), ``mix`` (per function, the do-nothing variant that scored best, for a
drill with several functions), and whatever else a devious student might try (always
True, the spec's checks around a do-nothing answer, ...). Each file's docstring says
what it does. Each must score exactly 0 on its drill.

Variants are graded in rounds (the k-th variant of every drill together, as one
submission), once per test session (``grader.tests.shared``), like the mutants:
in-process and without shrinking (whether a property fails does not depend on
shrinking), but on every property, since each must score 0. Drills are graded
independently, so variants cannot mask each other.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from grader.authoring.audit.do_nothing import public_functions
from grader.core.results_json import Results
from grader.core.syllabus import exercise_tests
from grader.tests.grading import REPO, exercise, run_grade
from grader.tests.shared import shared

LAZY = Path(__file__).parent / "lazy"
REQUIRED = ("zeros", "raises", "echo")


def _variants() -> dict[str, list[Path]]:
    by_drill: dict[str, list[Path]] = {}
    for path in sorted(LAZY.rglob("*.py")):
        drill = path.parent.relative_to(LAZY).as_posix()
        by_drill.setdefault(drill, []).append(path)
    return by_drill


BY_DRILL = _variants()
CASES = [(drill, k, path) for drill, paths in BY_DRILL.items() for k, path in enumerate(paths)]


def stub_functions(drill: str) -> list[str]:
    """The public functions of a drill's stub in ``exercises/``."""
    return public_functions((REPO / "exercises" / f"{drill}.py").read_text(encoding="utf-8"))


def test_every_drill_has_the_do_nothing_variants():
    missing = {}
    for drill in exercise_tests(REPO):
        have = {p.stem for p in BY_DRILL.get(drill, [])}
        need = set(REQUIRED) | ({"mix"} if len(stub_functions(drill)) > 1 else set())
        if need - have:
            missing[drill] = sorted(need - have)
    assert not missing, f"drills without these do-nothing variants: {missing}"


def test_every_variant_says_what_it_does():
    silent = [p.relative_to(LAZY).as_posix() for _, _, p in CASES
              if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not silent, f"do-nothing variants without a docstring: {silent}"


def graded_round(k: int, factory: pytest.TempPathFactory) -> Results:
    """The k-th variant of every drill that has one, graded as one submission."""
    def make(folder: Path) -> Results:
        drills = [d for d, paths in BY_DRILL.items() if k < len(paths)]
        for drill in drills:
            target = folder / "submission" / f"{drill}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(BY_DRILL[drill][k], target)
        return run_grade(folder / "submission", folder / "out", "--no-shrink", "--isolation", "none",
                         "--only", *drills)

    return shared(factory, f"lazy-round{k}", make)


@pytest.mark.parametrize("drill,k,path", [pytest.param(d, k, p, id=f"{d}/{p.stem}") for d, k, p in CASES])
def test_do_nothing_scores_zero(drill, k, path, tmp_path_factory):
    ex = exercise(graded_round(k, tmp_path_factory), drill)
    passed = sorted(t["name"] for t in ex["tests"] if t["outcome"] == "passed")
    assert ex["score"] == 0, (f"{path.name} ({drill}) scored {ex['score']} of {ex['max_score']}; "
                              f"it passed {passed}")
