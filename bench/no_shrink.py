"""What shrinking costs: grade a submission of wrong solutions with and without it.

The submission is the first mutant of every drill (grader/tests/mutants), so every
drill has failing properties for hypothesis to shrink. Both gradings run back to
back, so their ratio is comparable on a noisy machine. The script also checks
that every property passes or loses alike (only what a failure shows may
differ), which is why the mutant self-check can skip shrinking.

Run from the repository root with torchdrill installed, e.g.
`.tox/py3/bin/python bench/no_shrink.py [-n 2]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's grader, not the one installed

from grader.core.results_json import Results, verdicts  # noqa: E402

MUTANTS = REPO / "grader" / "tests" / "mutants"


def first_mutants(submission: Path) -> list[str]:
    """Copy each drill's first mutant into ``submission``; return the drill ids."""
    drills = []
    for folder in sorted({p.parent for p in MUTANTS.rglob("*.py")}):
        drill = folder.relative_to(MUTANTS).as_posix()
        target = submission / f"{drill}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(sorted(folder.glob("*.py"))[0], target)
        drills.append(drill)
    return drills


def grade(submission: Path, out: Path, drills: list[str], workers: int, *extra: str) -> tuple[float, Results]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade", str(submission), "--out", str(out),
                    "-n", str(workers), "--only", *drills, *extra],
                   cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start, json.loads((out / "results.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--workers", type=int, default=0)
    workers = parser.parse_args().workers
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        drills = first_mutants(root / "submission")
        shrunk_s, shrunk = grade(root / "submission", root / "shrink", drills, workers)
        plain_s, plain = grade(root / "submission", root / "no-shrink", drills, workers, "--no-shrink")
    print(f"{len(drills)} drills, one mutant each, -n {workers}")
    print(f"{'grading':<14}{'wall s':>8}")
    print(f"{'shrinking':<14}{shrunk_s:>8.1f}")
    print(f"{'--no-shrink':<14}{plain_s:>8.1f}")
    print(f"--no-shrink is {shrunk_s / plain_s:.2f}x the speed; same scores, property by property: "
          f"{verdicts(shrunk) == verdicts(plain)} ({shrunk['score']:.2f} / {shrunk['max_score']:g})")


if __name__ == "__main__":
    main()
