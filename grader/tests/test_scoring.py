"""The scoring formula (grader/core/scoring.py): its cases, and that it is the only one:
every score the engine shows (results, report, Gradescope, gradebook) comes from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.classroom.gradebook import Gradebook
from grader.core import results_json, scoring
from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT
from grader.core.results_json import Results
from grader.core.scoring import score_exercise
from grader.gradescope import results as gradescope_results
from grader.reports import student_report

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("outcomes,expected", [
    ([("passed", 1), ("passed", 2)], (10, 10, "passed")),
    ([("passed", 3), ("failed", 1)], (7.5, 10, "partial")),
    ([("not_attempted", 1), ("not_attempted", 1)], (0, 10, "not_attempted")),
    ([("error", 1), ("error", 2)], (0, 10, "error")),
    ([("error", 1), ("not_attempted", 2)], (0, 10, "error")),
    ([("failed", 1), ("error", 2)], (0, 10, "failed")),
    ([("timed_out", 1)], (0, 10, "failed")),
    ([("passed", 1), ("not_run", 5)], (10, 10, "passed")),
    ([("not_run", 1)], (0, 0, "not_run")),
    ([("passed", 1), ("not_attempted", 1)], (5, 10, "partial")),
])
def test_score_exercise(outcomes, expected):
    s = score_exercise(10, outcomes)
    assert (s.score, s.max_score, s.status) == expected


OUTCOMES = st.sampled_from([PASSED, FAILED, ERROR, TIMED_OUT, NOT_ATTEMPTED, NOT_RUN])
WEIGHTS = st.sampled_from([0.5, 1.0, 2.0, 3.0])


@settings(max_examples=200, deadline=None, database=None)
@given(points=st.integers(1, 20), tests=st.lists(st.tuples(OUTCOMES, WEIGHTS), min_size=1, max_size=8))
def test_a_propertys_points_add_up_to_its_exercises(points, tests):
    """What the passed properties earned adds up to the exercise's score, and what the
    properties run are worth to its maximum (each earned share is kept to 4 decimals)."""
    exercise = {"points": points, "tests": [{"outcome": o, "weight": w} for o, w in tests]}
    scored = score_exercise(points, tests)
    earned = sum(scoring.earned_points(exercise, t) for t in exercise["tests"])
    worth = [scoring.property_points(exercise, t) for t in exercise["tests"]]
    assert earned == pytest.approx(scored.score, abs=5e-5 * len(tests))
    assert sum(w for w in worth if w is not None) == pytest.approx(scored.max_score)
    assert [w is None for w in worth] == [o == NOT_RUN for o, _ in tests]


def _results() -> Results:
    """One exercise of 10 points: passed (weight 3), failed (1), not run here (2)."""
    info = {"a/b": results_json.ExerciseInfo("a/b", 10, "B")}
    tests = [results_json.TestRecord("a/b", "test_passes", PASSED, 3.0),
             results_json.TestRecord("a/b", "test_fails", FAILED, 1.0, message="lost"),
             results_json.TestRecord("a/b", "test_on_gpu", NOT_RUN, 2.0, markers=["cuda"])]
    return results_json.build("/tmp/sub", info, tests, {"isolation": {"mode": "process"}}, "suite")


def test_every_score_shown_comes_from_the_one_formula(monkeypatch, tmp_path):
    """Changing ``scoring.share`` changes every score the engine shows: no module keeps
    a copy of the formula (a copy would still say 7.5 where this says 300)."""
    monkeypatch.setattr(scoring, "share", lambda points, weight, weights_run: 100.0 * weight)
    results = _results()
    exercise = results["exercises"][0]
    by_name = {t["name"]: t for t in exercise["tests"]}
    assert exercise["score"] == 300.0  # results_json.rescore
    report_points: Any = student_report.environment(student_report.templates_dir(REPO)).globals["property_points"]
    assert report_points(exercise, by_name["test_fails"]) == 100.0
    assert report_points(exercise, by_name["test_on_gpu"]) is None
    gradescope = {t["name"]: t for t in gradescope_results.gradescope(results)["tests"]}
    assert gradescope["a/b: test_passes"]["score"] == 300.0
    assert gradescope["a/b: test_fails"]["max_score"] == 100.0
    with Gradebook.open(tmp_path / "gradebook.sqlite") as book:
        book.record("s1", "hash", results, wall_s=1.0, tests_s=1.0, worker="w")
        points = {row.test: row.points for row in book.test_rows()}
    assert points == {"test_passes": 300.0, "test_fails": 0.0, "test_on_gpu": 0.0}
