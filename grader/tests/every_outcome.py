"""A results document with every outcome the engine can give, made by the engine's own code.

No grading: each property's record comes from calling a small submission through a real
``Implementation`` (the forbidden-API guard, the per-call clock, the argument guard), the
engine's comparisons (``assert_same``, ``expect_raises``), its loader and the sandbox's
rebuilding of a worker's answer, and ``verdict.classify``/``verdict.counterexample``
turning what was raised into the record a grading writes (message, kept id, calls). So
every message a learner can meet is here with the very id and parameters a grading keeps,
in a fraction of a second (``test_one_language`` renders it in every view and language).

The properties carry real names of real drills, so titles and the drills' own phrases
(``locales/zh_CN``) apply as they do to a learner's results.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from grader.contract import call as call_module
from grader.contract.expect import assert_same, expect_raises
from grader.contract.forbid import Forbidden
from grader.contract.impl import Implementation
from grader.contract.loader import load_exercise
from grader.core import results_json
from grader.core.i18n import Message
from grader.core.outcomes import CUDA_REASON, GLOO_REASON, NOT_RUN, BrokenContract, TimedOut
from grader.core.results_json import ExerciseInfo, Results, TestRecord
from grader.grading import verdict
from grader.grading.budgets import BUDGET_RAN_OUT
from grader.grading.collector import ResultsCollector
from grader.grading.judge import _changed_arguments, _skipped
from grader.sandbox.sandboxed_impl import _rebuild

ONE_HOT_FORBID = {"F.one_hot": "make a zeros tensor of shape (*labels.shape, C) and scatter_ ones "
                                "along the last dim with labels.unsqueeze(-1) as the index"}

SOURCES = {
    "tensors/one_hot": '''
        import torch
        import torch.nn.functional as F


        def one_hot(labels, num_classes=-1):
            if num_classes == 99:
                return F.one_hot(labels, 3)  # forbidden
            if num_classes == 7:
                labels.mul_(2)  # changes its argument
            out = torch.zeros(*labels.shape, max(num_classes, 1))  # float32: wrong dtype
            return out.scatter_(-1, labels.long().unsqueeze(-1) % max(num_classes, 1), 1)
    ''',
    "tensors/scatter": '''
        import torch


        def gather(x, dim, index):
            print("gathering", tuple(index.shape))
            raise RuntimeError("my own mistake: " + str(dim))


        def scatter(x, dim, index, src):
            return x
    ''',
    "tensors/padding": '''
        import torch


        def pad_sequences(seqs, padding_value=0.0):
            raise NotImplementedError


        def pad_one_hot(sequence, target_length):
            while True:
                pass
    ''',
    "tensors/broadcast": '''
        import no_such_module_here


        def broadcast_shapes(*shapes):
            return ()
    ''',
    "tensors/contiguity": '''
        def is_contiguous(size, stride)
            return True
    ''',
}


def _record(exercise: str, name: str, run: Callable[[], Any], impl: Implementation | None = None,
            weight: float = 1.0, **extra: Any) -> TestRecord:
    """The record a grading writes for a property whose body is ``run``: what it raised,
    classified by the engine, with the calls ``impl`` recorded."""
    exc: BaseException | None = None
    try:
        run()
    except BaseException as caught:  # noqa: BLE001 - every outcome, as a test would end
        exc = caught
    outcome, message, kept = verdict.classify(exc)
    record = TestRecord(exercise, name, outcome, weight=weight, message=message,
                        message_id=kept.to_json() if kept is not None else None, **extra)
    if exc is not None and outcome in ("failed", "error", "timed_out"):
        record.counterexample = verdict.counterexample(impl, exc)
    if impl is not None:
        impl.calls = []  # the next property's calls (the record keeps this one's)
    return record


def _raise(exc: BaseException) -> Callable[[], None]:
    def run() -> None:
        raise exc
    return run


def _with_failing_case(run: Callable[[], Any]) -> Callable[[], None]:
    """``run``, its failure carrying hypothesis' own report of the case (no call recorded)."""
    def noted() -> None:
        try:
            run()
        except AssertionError as failure:
            failure.add_note("Failing test case: test_scatter_matches_torch(\n    impl=impl(tensors/scatter),\n"
                             "    case=(tensor([0.5000, 1.0000, 2.0000]), 0),\n)")
            raise
    return noted


def every_outcome(folder: Path) -> Results:
    """Every outcome and every message kind of the engine, for one submission in ``folder``."""
    submission = folder / "submission"
    for drill, source in SOURCES.items():
        path = submission / f"{drill}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    one_hot = Implementation(submission, "tensors/one_hot", Forbidden.from_marker(ONE_HOT_FORBID),
                             mutates={"one_hot": ()})
    scatter = Implementation(submission, "tensors/scatter", Forbidden())
    padding = Implementation(submission, "tensors/padding", Forbidden(), call_timeout=0.2)
    labels, floats = torch.tensor([2, 0]), torch.tensor([0.5, 1.0, 2.0])
    right = torch.nn.functional.one_hot(labels, 3)

    def changed_labels() -> None:
        one_hot.one_hot(labels.clone(), 7)
        item = type("Item", (), {"funcargs": {"impl": one_hot}})()
        said = _changed_arguments(item)
        assert said is not None
        failure = AssertionError(str(said))
        failure.worded = said  # type: ignore[attr-defined]
        raise failure

    def the_sandbox_refused() -> None:  # a worker's report of a forbidden use, as the grader rebuilds it
        said = Forbidden.from_marker(ONE_HOT_FORBID)
        use = next(iter(said.hints.items()))
        from grader.contract.forbid import ForbiddenUse

        words = ForbiddenUse(*use).message("one_hot()")
        raise _rebuild({"kind": "assertion", "message": str(words), "worded": words.to_json()}, "one_hot")

    def course_phrase() -> None:  # a sentence of the drill's test, as an ``assert`` writes it
        raise AssertionError("one_hot returned list, not a tensor")

    def case_with_a_reason() -> None:  # a course phrase with another inside it (``{why}``)
        got = one_hot.one_hot(labels, 3)
        assert_same(got, right, what="one_hot of valid labels of shape (2,) with num_classes=3 "
                                     "(beside the bool labels)")

    def values_differ() -> None:
        assert_same(floats * 2, floats)

    def items_differ() -> None:
        assert_same((floats, 1), (floats, 2))

    def raises_nothing() -> None:
        with expect_raises(ValueError, when="a label is negative (-1)"):
            one_hot.one_hot(labels, 3)

    def raises_another() -> None:
        with expect_raises(IndexError, when="dim=3 for a 1-d input"):
            scatter.gather(floats, 3, labels)

    def loops() -> None:
        padding.pad_one_hot(right, 5)

    def loops_again() -> None:
        padding.timeouts[("tensors/padding", "pad_one_hot")] = call_module.MAX_TIMEOUTS
        padding.pad_one_hot(right, 5)

    def a_clock(message: Message) -> Callable[[], None]:
        def run() -> None:
            raise TimedOut(message)
        return run

    def from_the_worker(info: Any) -> Callable[[], None]:
        def run() -> None:
            raise _rebuild(info, "gather")
        return run

    def loads(drill: str) -> Callable[[], None]:
        def run() -> None:
            load_exercise(submission, drill)
        return run

    def unchecked() -> None:
        json.loads("{not json")

    def empty() -> None:
        raise AssertionError()

    def not_attempted() -> None:
        Implementation(submission, "tensors/padding", Forbidden()).pad_sequences([floats])

    def missing_function() -> None:
        Implementation(submission, "tensors/scatter", Forbidden()).function("scatter_add")

    def passes() -> None:
        pass

    with open(folder / "printed.txt", "w") as printed, contextlib.redirect_stdout(printed):  # as captured
        tests = [
            _record("tensors/one_hot", "test_matches_f_one_hot_given_classes",
                    lambda: assert_same(one_hot.one_hot(labels, 3), right), one_hot, weight=3),
            _record("tensors/one_hot", "test_matches_f_one_hot_inferred_classes",
                    lambda: one_hot.one_hot(labels, 99), one_hot, weight=2),
            _record("tensors/one_hot", "test_bool_labels_raise_value_error", the_sandbox_refused, one_hot),
            _record("tensors/one_hot", "test_dtype_is_int64", course_phrase, one_hot),
            _record("tensors/one_hot", "test_empty_labels_with_given_classes", case_with_a_reason, one_hot),
            _record("tensors/one_hot", "test_labels_are_left_unchanged", changed_labels, one_hot),
            _record("tensors/one_hot", "test_negative_label_raises_value_error", raises_nothing, one_hot),
            _record("tensors/one_hot", "test_float_labels_raise_value_error", passes),
            _record("tensors/one_hot", "test_rows_sum_to_one_and_argmax_is_label", passes, hidden=True,
                    markers=["hidden"]),
            _record("tensors/scatter", "test_gather_matches_torch", lambda: scatter.gather(floats, 0, labels),
                    scatter, weight=2, stdout="gathering (2,)\n"),
            _record("tensors/scatter", "test_gather_rejects_index_out_of_range", raises_another, scatter),
            _record("tensors/scatter", "test_scatter_matches_torch", _with_failing_case(values_differ)),
            _record("tensors/scatter", "test_scatter_leaves_input_unchanged", items_differ),
            _record("tensors/scatter", "test_results_share_no_memory_with_the_arguments", missing_function),
            _record("tensors/scatter", "test_scatter_writes_a_python_number", unchecked),
            _record("tensors/scatter", "test_scatter_with_repeated_positions_writes_one_of_their_values", empty),
            _record("tensors/scatter", "test_scatter_rejects_index_out_of_range", from_the_worker(
                {"kind": "wire", "message": "a tensor of 2**40 elements is over the size cap"})),
            _record("tensors/scatter", "test_index_shape_mismatch_raises_value_error", from_the_worker("?")),
            _record("tensors/scatter", "test_dim_out_of_range_raises_index_error",
                    _raise(BrokenContract(Message(
                        "the backward pass through {drill}: its answer broke the grading contract: {error}",
                        {"drill": "tensors/scatter", "error": "a gradient of the wrong shape"})))),
            _record("tensors/padding", "test_pad_one_hot_appends_zero_rows", loops, padding),
            _record("tensors/padding", "test_pad_one_hot_returns_a_new_tensor", loops_again, padding),
            _record("tensors/padding", "test_pad_one_hot_raises_when_target_is_shorter",
                    a_clock(Message("the test ran past its {limit:g} s limit", {"limit": 3}))),
            _record("tensors/padding", "test_inputs_are_left_unchanged", a_clock(BUDGET_RAN_OUT)),
            _record("tensors/padding", "test_empty_list_raises_value_error", not_attempted),
            _record("tensors/padding", "test_matches_pad_sequence_batch_first", passes),
            _record("tensors/broadcast", "test_shape_matches_torch", loads("tensors/broadcast")),
            _record("tensors/broadcast", "test_no_shapes_broadcast_to_a_scalar", loads("tensors/broadcast")),
            _record("tensors/contiguity", "test_agrees_with_torch_on_layouts", loads("tensors/contiguity")),
            _record("tensors/contiguity", "test_return_types", loads("tensors/missing")),
            _record("tensors/indexing", "test_index_select_matches_torch", passes),
        ]
    skipped = _skipped(RuntimeError("pytest.skip() in a test"))
    tests.append(TestRecord("tensors/contiguity", "test_size_one_dims_do_not_matter", skipped["outcome"],
                            message=skipped["message"], message_id=skipped["message_id"]))
    for name, reason in (("test_on_gpu_results_stay_on_the_device", CUDA_REASON),
                         ("test_masked_select_matches_torch", GLOO_REASON)):
        tests.append(TestRecord("tensors/indexing", name, NOT_RUN, message=reason,
                                message_id=Message(reason).to_json(), markers=["cuda"]))
    tests.append(TestRecord("distributed/ring_allreduce", "test_every_rank_ends_with_the_sum", NOT_RUN,
                            message=GLOO_REASON, message_id=Message(GLOO_REASON).to_json(), markers=["distributed"]))
    died = TestRecord("tensors/contiguity", "test_empty_tensors_are_contiguous", "passed")
    ResultsCollector._died(died, "Fatal Python error: Segmentation fault")
    tests.append(died)
    shutil.rmtree(submission)  # paths in messages stay, as after a grading
    drills = {t.exercise for t in tests}
    exercises = {d: ExerciseInfo(d, 10) for d in sorted(drills)}
    exercises["tensors/one_hot"].static_flags = [{"name": "F.one_hot", "line": 7, "code": "return F.one_hot(labels, 3)"}]
    results = results_json.build(str(submission), exercises, tests, {"torch": torch.__version__,
                                                                        "cuda_available": False})
    for ex in results["exercises"]:
        if ex["id"] == "tensors/one_hot":
            ex["hints_used"] = 1
    return results

