"""Scores from test outcomes (pure functions, no pytest).

Score of an exercise = points x (weights passed / weights run). Tests "not run
here" (e.g. ``cuda`` on a CPU runner) are left out of the weights run; an
exercise with no test run is left out of the maximum and shown as pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED


@dataclass(frozen=True)
class Scored:
    score: float
    max_score: float
    status: str


def score_exercise(points: float, outcomes: Sequence[tuple[str, float]]) -> Scored:
    """``outcomes`` are (outcome, weight) pairs of one exercise's tests."""
    run = [(o, w) for o, w in outcomes if o != NOT_RUN]
    if not run:
        return Scored(0.0, 0.0, NOT_RUN)
    weight_run = sum(w for _, w in run)
    weight_passed = sum(w for o, w in run if o == PASSED)
    score = round(points * weight_passed / weight_run, 4) if weight_run else 0.0
    kinds = {o for o, _ in run}
    if kinds == {PASSED}:
        status = PASSED
    elif weight_passed > 0:
        status = "partial"
    elif kinds == {NOT_ATTEMPTED}:
        status = NOT_ATTEMPTED
    elif ERROR in kinds and kinds <= {ERROR, NOT_ATTEMPTED}:
        status = ERROR
    else:
        status = FAILED
    return Scored(score, float(points), status)
