"""Scores from test outcomes (pure functions, no pytest).

Score of an exercise = points x (weights passed / weights run). Tests "not run
here" (e.g. ``cuda`` on a CPU runner) are left out of the weights run; an
exercise with no test run is left out of the maximum and shown as pending.

This is the one place the formula lives: the results (``results_json``), the reports
(a property's points), the Gradescope export and the gradebook's points per test all
call ``share`` through the functions below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED


@dataclass(frozen=True)
class Scored:
    score: float
    max_score: float
    status: str


def weight_run(outcomes: Iterable[tuple[str, float]]) -> float:
    """The weights of the tests that ran (every outcome but "not run here")."""
    return sum(w for o, w in outcomes if o != NOT_RUN)


def share(points: float, weight: float, weights_run: float) -> float:
    """The points ``weight`` earns out of ``weights_run``: points x weight / weights run
    (0 when nothing weighed was run)."""
    return points * weight / weights_run if weights_run else 0.0


def score_exercise(points: float, outcomes: Sequence[tuple[str, float]]) -> Scored:
    """``outcomes`` are (outcome, weight) pairs of one exercise's tests."""
    run = [(o, w) for o, w in outcomes if o != NOT_RUN]
    if not run:
        return Scored(0.0, 0.0, NOT_RUN)
    weight_passed = sum(w for o, w in run if o == PASSED)
    score = round(share(points, weight_passed, weight_run(run)), 4)
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


def property_points(exercise: Mapping[str, Any], test: Mapping[str, Any]) -> float | None:
    """The points one property (a test record of the results) is worth in its exercise,
    passed or not (None when it was not run here)."""
    if test["outcome"] == NOT_RUN:
        return None
    run = weight_run((t["outcome"], t["weight"]) for t in exercise["tests"])
    return share(exercise["points"], test["weight"], run)


def earned_points(exercise: Mapping[str, Any], test: Mapping[str, Any]) -> float:
    """What a property earned: its points (``property_points``, to 4 decimals, as the
    exercise's score) when it passed, else 0."""
    if test["outcome"] != PASSED:
        return 0.0
    return round(property_points(exercise, test) or 0.0, 4)
