"""Right answers in other forms than the reference's get every point.

A fair solution is a whole exercise file at ``fair/<topic>/<drill>/<name>.py``, right by
the spec's words though written otherwise than the reference (torch's own types, another
algorithm); its docstring says what differs and where it came from. Each drill's solutions
are graded in rounds, like the mutant corpus (the k-th of every drill together), on all the
drill's properties: each must score full marks. Where a property refuses one, the rule it
applies is narrower than the spec (issue 27: ``torch.Size`` is "a tuple of ints").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.core.results_json import Results
from grader.tests.grading import exercise, run_grade
from grader.tests.shared import shared

FAIR = Path(__file__).parent / "fair"


def _solutions() -> dict[str, list[Path]]:
    by_drill: dict[str, list[Path]] = {}
    for path in sorted(FAIR.rglob("*.py")):
        by_drill.setdefault(path.parent.relative_to(FAIR).as_posix(), []).append(path)
    return by_drill


BY_DRILL = _solutions()
CASES = [(drill, k, path) for drill, paths in BY_DRILL.items() for k, path in enumerate(paths)]


def graded_round(k: int, factory: pytest.TempPathFactory) -> Results:
    """The k-th fair solution of every drill that has one, graded as one submission on all
    their drills' properties (in-process: they are the course's own files)."""
    def make(folder: Path) -> Results:
        drills = []
        for drill, paths in BY_DRILL.items():
            if k < len(paths):
                target = folder / "submission" / f"{drill}.py"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(paths[k], target)
                drills.append(drill)
        return run_grade(folder / "submission", folder / "out", "--only", *drills, "--isolation", "none")

    return shared(factory, f"fair-round{k}", make)


@pytest.mark.parametrize("drill,k,path", [pytest.param(d, k, p, id=f"{d}/{p.stem}") for d, k, p in CASES])
def test_fair_solution_scores_full_marks(drill, k, path, tmp_path_factory):
    ex = exercise(graded_round(k, tmp_path_factory), drill)
    lost = [f"{t['name']}: {t['outcome']} ({(t.get('message') or '')[:200]})"
            for t in ex["tests"] if t["outcome"] not in ("passed", "not_run")]
    assert ex["score"] == ex["max_score"] and not lost, f"{path.name} lost points on {drill}: {lost}"
