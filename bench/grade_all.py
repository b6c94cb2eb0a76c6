"""What grading a class costs: ``torchdrill grade-all`` with 1 and with 2 workers.

Makes N synthetic submissions (``grader/tests/classroom.py``: reference copies,
stubs, half-done, mutants; some as zips), grades them sandboxed with ``--workers 1``
and then ``--workers 2`` into fresh folders, and prints from that one run (the
machine is noisy, so compare ratios, not seconds):

- submissions per minute for each, and the speed-up (the issue's target: at least
  1.7x on 2 cores);
- the grader's own overhead per submission, outside test bodies: the share of each
  submission's grading (as its pool thread saw it: hand-over, the grading process's
  pytest start and collection, sandbox set-up, results) not spent in pytest's test
  phases, summed over submissions (target: at most 10%);
- the share of worker capacity not spent grading at all (grading processes
  starting, the coordinator's gradebook writes and reports, the last submission's
  tail while the other worker idles).

Run from the repository root with torchdrill installed, e.g.
`.tox/py3/bin/python bench/grade_all.py [-n 8] [--only tensors/one_hot ...]`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from grader.classroom.gradebook import Gradebook  # noqa: E402
from grader.tests.classroom import make_class  # noqa: E402


def run(submissions: Path, out: Path, workers: int, extra: list[str]) -> dict[str, float]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade-all", str(submissions), "--out", str(out),
                    "--workers", str(workers), "--course", str(REPO), *extra],
                   cwd=REPO, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    with Gradebook.open(out / "gradebook.sqlite") as book:
        rows = book.submission_rows()
    wall = sum(r.wall_s for r in rows)
    tests = sum(r.tests_s for r in rows)
    return {"seconds": seconds, "n": len(rows), "wall": wall, "tests": tests,
            "per_minute": len(rows) / seconds * 60,
            "overhead": (wall - tests) / wall, "idle": 1 - wall / (seconds * workers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=8, help="synthetic submissions (default 8)")
    parser.add_argument("--only", nargs="+", metavar="EXERCISE_ID", help="grade only these drills")
    parser.add_argument("--profile", default=None, help="hypothesis profile")
    args = parser.parse_args()
    extra = [*(["--only", *args.only] if args.only else []),
             *(["--profile", args.profile] if args.profile else [])]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        make_class(folder, args.n, only=args.only)
        figures = {w: run(folder, Path(tmp) / f"out{w}", w, extra) for w in (1, 2)}
    print(f"{args.n} submissions, {'all drills' if not args.only else ', '.join(args.only)}, "
          f"sandboxed")
    for w, f in figures.items():
        print(f"  --workers {w}: {f['seconds']:.1f} s, {f['per_minute']:.2f} submissions/min; "
              f"overhead outside test bodies {f['overhead']:.1%} "
              f"({f['wall'] - f['tests']:.1f} s of {f['wall']:.1f} s); "
              f"capacity not grading {f['idle']:.1%}")
    print(f"speed-up 2 vs 1 workers: {figures[1]['seconds'] / figures[2]['seconds']:.2f}x "
          "(target >= 1.7x)")


if __name__ == "__main__":
    main()
