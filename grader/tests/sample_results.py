"""A results document with every outcome, built in-process for the report tests.

No grading: the records are made by hand, but their counterexamples come from
the real ``grader.contract.describe`` and ``grader.contract.expect`` code, so they have exactly the
shape a grading run writes. The submission's code "printed and returned"
``<script>`` in several places, to test escaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from grader.contract.describe import describe
from grader.contract.expect import Mismatch, assert_same
from grader.core import results_json
from grader.core.outcomes import CUDA_REASON  # what a grading writes
from grader.core.results_json import ExerciseInfo, Results, TestRecord

SCRIPT = "<script>alert('pwned')</script>"


def _mismatch(got: Any, expected: Any) -> dict[str, Any]:
    try:
        assert_same(got, expected)
    except Mismatch as exc:
        return exc.details
    raise AssertionError("expected a mismatch")


def _call(function: str, *args: Any, result: Any = None, raised: str | None = None,
          **kwargs: Any) -> dict[str, Any]:
    call = {"function": function, "args": [describe(a) for a in args],
            "kwargs": {k: describe(v) for k, v in kwargs.items()}}
    if raised is not None:
        call["raised"] = raised
    else:
        call["result"] = describe(result)
    return call


def mixed_results() -> Results:
    """Five exercises: partial (every problem kind), not attempted, pending (cuda),
    all passed (with a hidden property), and failed with a long elided tensor."""
    exercises = {
        "tensors/one_hot": ExerciseInfo("tensors/one_hot", 10, "One-hot encoding built with scatter_."),
        "attention/sdpa": ExerciseInfo("attention/sdpa", 12, f"Scaled dot-product attention {SCRIPT}"),
        "autograd/linear": ExerciseInfo("autograd/linear", 5, "A linear layer's backward pass."),
        "cuda/pinned": ExerciseInfo("cuda/pinned", 4, "Pinned-memory transfers overlap compute."),
        "basics/stack": ExerciseInfo("basics/stack", 3, "torch.stack from torch.cat and views."),
    }
    labels = torch.tensor([2, 0])
    wrong = torch.zeros(2, 3).scatter_(-1, labels.unsqueeze(-1), 1)
    right = torch.zeros(2, 3, dtype=torch.int64).scatter_(-1, labels.unsqueeze(-1), 1)
    q = torch.arange(6, dtype=torch.float32).reshape(1, 2, 3) / 4
    unscaled = torch.softmax(q @ q.transpose(-2, -1), -1) @ q
    scaled = torch.softmax(q @ q.transpose(-2, -1) / 3 ** 0.5, -1) @ q
    big_got = torch.arange(200, dtype=torch.float64).reshape(20, 10)
    big_expected = big_got.clone()
    big_expected[0, 1] += 0.5
    strided = torch.arange(12).reshape(3, 4).t()

    tests = [
        TestRecord("tensors/one_hot", "test_matches_f_one_hot", "failed", weight=3,
                   message="result: dtype differs: got torch.float32, expected torch.int64",
                   counterexample={
                       "example": "Failing test case: test_matches_f_one_hot(\n"
                                  "    impl=impl(tensors/one_hot),\n    case=(tensor([2, 0]), 3),\n)",
                       "calls": [_call("one_hot", labels, 3, result=wrong)],
                       **_mismatch(wrong, right)}),
        TestRecord("tensors/one_hot", "test_rows_sum_to_one", "passed", weight=1),
        TestRecord("tensors/one_hot", "test_negative_label_raises", "error", weight=1,
                   message=("one_hot() raised RuntimeError: index -1 is out of bounds\n"
                            "Traceback (student code only):\n"
                            '  File "/sub/tensors/one_hot.py", line 9, in one_hot\n'
                            "    return out.scatter_(-1, labels.unsqueeze(-1), 1)"),
                   counterexample={"calls": [_call("one_hot", torch.tensor([-1]), 2,
                                                   raised="RuntimeError: index -1 is out of bounds")]}),
        TestRecord("tensors/one_hot", "test_slow_path", "timed_out", weight=1,
                   message="the test ran past its 120 s limit",
                   counterexample={"calls": [_call("one_hot", strided, 12, result=SCRIPT)]}),
        TestRecord("tensors/one_hot", "test_on_cuda", "not_run", weight=1, markers=["cuda"],
                   message=CUDA_REASON),
        TestRecord("attention/sdpa", "test_matches_reference", "failed", weight=2,
                   message=f"result: Tensor-likes are not close! {SCRIPT}",
                   counterexample={"calls": [_call("attention", q, q, q, result=unscaled)],
                                   **_mismatch(unscaled, scaled)}),
        TestRecord("attention/sdpa", "test_returns_text", "failed", weight=1,
                   message=f"result: expected 'ok', got '{SCRIPT}'",
                   counterexample={"calls": [_call("describe_it", result=SCRIPT)],
                                   **_mismatch(SCRIPT, "ok")}),
        TestRecord("autograd/linear", "test_grad_input", "not_attempted", weight=1,
                   message="linear_backward() raised NotImplementedError"),
        TestRecord("autograd/linear", "test_grad_weight", "not_attempted", weight=1,
                   message="linear_backward() raised NotImplementedError"),
        TestRecord("cuda/pinned", "test_overlap", "not_run", weight=1, markers=["cuda"],
                   message=CUDA_REASON),
        TestRecord("basics/stack", "test_matches_torch_stack", "passed", weight=2),
        TestRecord("basics/stack", "test_hidden_edge_cases", "passed", weight=1, hidden=True,
                   markers=["hidden"]),
        TestRecord("basics/stack", "test_big", "failed", weight=1, hidden=True, markers=["hidden"],
                   message="result: Tensor-likes are not close!",
                   counterexample={"calls": [_call("stack", [big_got], dim=0, result=big_got)],
                                   **_mismatch(big_got, big_expected)}),
    ]
    for t in tests:
        if t.name == "test_returns_text":
            assert t.counterexample is not None
            t.counterexample["stdout"] = f"debug {SCRIPT}\n"
    results = results_json.build("/submissions/ada", exercises, tests,
                                   {"torch": torch.__version__, "cuda_available": False})
    results["suite_hash"] = "3f2a9c0d"
    _set_captured(results, "tensors/one_hot", "test_negative_label_raises",
                  stdout=f"labels are {SCRIPT}\n", stderr="UserWarning: <b>careful</b>\n")
    return results


def _set_captured(results: Mapping[str, Any], exercise: str, test: str, **streams: str) -> None:
    for ex in results["exercises"]:
        for t in ex["tests"]:
            if ex["id"] == exercise and t["name"] == test:
                t.update(streams)


def outcomes_in(results: Mapping[str, Any], *outcomes: str) -> list[tuple[str, dict[str, Any]]]:
    """(exercise id, test) for every test with one of ``outcomes``."""
    return [(ex["id"], t) for ex in results["exercises"] for t in ex["tests"]
            if t["outcome"] in outcomes]
