"""Measure the reference's grading time per drill and record it in tests/reference_times.json.

Each drill's wall budget is derived from it (grader/core/time_budgets.py: 10 times the
reference's time plus 30 s). Run it after changing a drill's tests (a drill whose
test file changed since gets the default budget until then), inside the tox
environment: ``.tox/py3/bin/python bench/reference_times.py``. Prints each drill's
time; the sums of the test durations, graded in-process, one process.
``--only DRILL ...`` grades those drills and keeps the others' recorded times (those
whose tests have not changed since; the rest are left out, and the self-check says so).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's grader, not an installed one

from grader.core import time_budgets  # noqa: E402
from grader.core.syllabus import exercise_tests  # noqa: E402
from grader.grading.pipeline import grade  # noqa: E402
from grader.grading.request import GradingRequest  # noqa: E402
from grader.intake.submission import open_submission  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="DRILL",
                        help="grade only these drills (e.g. training/knn); keep the others' times")
    only = parser.parse_args().only
    request = GradingRequest(course=REPO, only=tuple(only or ()))
    results = grade(request, open_submission(REPO / "reference", REPO))
    seconds = {ex["id"]: sum(t["duration_s"] for t in ex["tests"]) for ex in results["exercises"]}
    for drill, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"{s:7.2f} s  {drill}")
    tests = exercise_tests(REPO)
    if only:  # the others' times, where their tests are still the ones timed
        seconds = {**time_budgets.recorded(REPO / "tests", tests), **seconds}
    path = time_budgets.record(REPO / "tests", tests, seconds)
    print(f"total {sum(seconds.values()):.1f} s; written to {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
