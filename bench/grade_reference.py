"""Wall time of grading the reference (the 60 s budget) and the stubs, serial and -n 2.

Run from the repository root with torchdrill installed (e.g. `.tox/py3/bin/python
bench/grade_reference.py`). Figures come from one run each, side by side, so the
ratios are comparable even on a noisy machine. ``--against COMMIT`` grades the reference
with -n 2 here and in a checkout of COMMIT, alternately, and prints their ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_S = 60.0


def wall(submission: str, workers: int, repo: Path = REPO) -> float:
    """Seconds to grade ``submission`` with the grader of ``repo`` (its own folder first on
    the path, so another checkout's engine grades its own course)."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grader", "grade", submission, "--out", out,
                        "-n", str(workers)], cwd=repo, env=env, check=True, capture_output=True)
        return time.perf_counter() - start


def against(commit: str, rounds: int) -> None:
    """The reference with -n 2, here and at ``commit``, alternately: each one's best."""
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "other"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(other), commit], cwd=REPO, check=True)
        try:
            here, there = [], []
            for _ in range(rounds):
                here.append(wall("reference", 2))
                there.append(wall("reference", 2, other))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO, check=True)
    print(f"reference, -n 2, best of {rounds}: this checkout {min(here):.1f} s, {commit} {min(there):.1f} s: "
          f"{min(here) / min(there):.2f}x its time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="COMMIT", help="compare the reference's -n 2 grading with COMMIT's")
    parser.add_argument("--rounds", type=int, default=2, help="alternate rounds with --against (default 2)")
    options = parser.parse_args()
    if options.against:
        against(options.against, options.rounds)
        return
    rows = [(sub, n, wall(sub, n)) for sub in ("reference", "exercises") for n in (0, 2)]
    print(f"{'submission':<12}{'workers':>8}{'wall s':>9}")
    for sub, n, seconds in rows:
        print(f"{sub:<12}{n:>8}{seconds:>9.1f}")
    ref_serial, ref_parallel = rows[0][2], rows[1][2]
    best = min(ref_serial, ref_parallel)
    print(f"reference: -n 2 is {ref_serial / ref_parallel:.2f}x the speed of serial; "
          f"best {best:.1f} s = {best / BUDGET_S:.2f} of the {BUDGET_S:.0f} s budget")


if __name__ == "__main__":
    main()
