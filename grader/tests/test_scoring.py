import pytest

from grader.core.scoring import score_exercise


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
