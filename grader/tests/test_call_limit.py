"""A call that never ends costs its property, in every isolation mode.

In the grader's own process (``check``, ``grade`` of a learner's own folder) a call
of the submission's code has the same per-call limit as in a sandbox worker
(``grader.contract.call.call_clock``): the property that reached the endless loop
is "timed out" and shows the input it was given; properties that never reach the
loop pass; after two such calls the function is not called again.
"""

from __future__ import annotations

import signal
import time

import pytest

from grader.contract.call import CallTimedOut, call_clock
from grader.tests.grading import exercise, grade_properties

ONE_HOT = "tensors/one_hot"
LOOPS = "test_matches_f_one_hot_inferred_classes"  # num_classes left to its default
PASSES = ("test_dtype_is_int64", "test_rows_sum_to_one_and_argmax_is_label")

# Right with num_classes given; an endless loop when it must infer it.
ENDLESS = '''
import torch


def one_hot(labels, num_classes=-1):
    while num_classes == -1:
        pass
    labels = labels.long()
    return torch.zeros(*labels.shape, num_classes, dtype=torch.int64).scatter_(-1, labels.unsqueeze(-1), 1)
'''


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_an_endless_loop_costs_only_the_properties_that_reach_it(tmp_path, isolation):
    submission = tmp_path / "submission"
    (submission / "tensors").mkdir(parents=True)
    (submission / "tensors" / "one_hot.py").write_text(ENDLESS)
    results = grade_properties(submission, tmp_path / "out", {ONE_HOT: [LOOPS, *PASSES]},
                               "--isolation", isolation, "--call-timeout", "1", "--no-shrink")
    tests = {t["name"]: t for t in exercise(results, ONE_HOT)["tests"]}
    assert all(tests[name]["outcome"] == "passed" for name in PASSES), tests
    looped = tests[LOOPS]
    assert looped["outcome"] == "timed_out"
    assert "1 s limit per call" in looped["message"]
    call = looped["counterexample"]["calls"][-1]
    assert call["function"] == "one_hot" and len(call["args"]) == 1  # the input it was given
    assert call["args"][0]["type"] == "tensor" and "1 s limit per call" in call["timed_out"]["message"]
    assert "raised" not in call, "a call the grader stopped raised nothing of the student's"


def test_the_clock_keeps_the_tests_own_clock():
    """Nested inside a test's clock (an outer ITIMER_REAL), the call's clock gives the
    outer one back with what was left of it, and leaves a call to an outer clock that
    would end first."""
    fired: list[str] = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append("outer"))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with call_clock(5.0, "f()"):
            assert signal.getitimer(signal.ITIMER_REAL)[0] <= 5.0
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 5.0 < left <= 30.0
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        with call_clock(5.0, "f()"):
            assert signal.getitimer(signal.ITIMER_REAL)[0] <= 2.0  # the outer clock, untouched
        with pytest.raises(CallTimedOut, match=r"f\(\) ran past the 0.05 s limit"):
            with call_clock(0.05, "f()"):
                time.sleep(1.5)
        assert fired == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
