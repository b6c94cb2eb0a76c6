"""Wall time of grading the reference (the 60 s budget) and the stubs, serial and -n 2.

Run from the repository root with torchdrill installed (e.g. `.tox/py3/bin/python
bench/grade_reference.py`). Figures come from one run each, side by side, so the
ratios are comparable even on a noisy machine.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_S = 60.0


def wall(submission: str, workers: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grader", "grade", submission, "--out", out,
                        "-n", str(workers)], cwd=REPO, check=True, capture_output=True)
        return time.perf_counter() - start


def main() -> None:
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
