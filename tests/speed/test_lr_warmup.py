"""The linear-scaling rule with a linear warmup, as a LambdaLR: the lr trace of every group,
against torch's own LinearLR."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import StudentError, assert_same, expect_raises
from tests.properties import anchored, assert_ordinary

_BY_HAND = ("write the factor of step t yourself (start_factor + (1 - start_factor) * "
            "min(t, warmup_steps) / warmup_steps) and give it to LambdaLR")

pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.optim.lr_scheduler.LinearLR": _BY_HAND,
    "torch.optim.lr_scheduler.SequentialLR": _BY_HAND,
})

DEFAULTS = {"base_batch_size": 256, "warmup_steps": 5, "start_factor": 0.1}


@dataclass
class Schedule:
    base_lrs: list[float]
    batch_size: int
    total_steps: int
    base_batch_size: int = 256
    warmup_steps: int = 5
    start_factor: float = 0.1
    # Whether a call spells out the arguments equal to their defaults or leaves them out.
    spelled: bool = True

    def call(self, fn):
        given = {"base_batch_size": self.base_batch_size, "warmup_steps": self.warmup_steps,
                 "start_factor": self.start_factor}
        if not self.spelled:
            given = {k: v for k, v in given.items() if v != DEFAULTS[k]}
        return fn(list(self.base_lrs), self.batch_size, self.total_steps, **given)

    def peaks(self) -> list[float]:
        return [lr * self.batch_size / self.base_batch_size for lr in self.base_lrs]

    def expected(self) -> list[list[float]]:
        """The trace of torch's LinearLR from start_factor to 1 over warmup_steps (no
        scheduler at all without a warmup), read before each optimizer step."""
        optimizer = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr}
                                     for lr in self.peaks()], lr=1.0)
        scheduler = (torch.optim.lr_scheduler.LinearLR(optimizer, self.start_factor, 1.0, self.warmup_steps)
                     if self.warmup_steps else None)
        trace = []
        for _ in range(self.total_steps):
            trace.append([group["lr"] for group in optimizer.param_groups])
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
        return trace

    def text(self) -> str:
        return (f"base_lrs={self.base_lrs}, batch_size={self.batch_size}, total_steps={self.total_steps}, "
                f"base_batch_size={self.base_batch_size}, warmup_steps={self.warmup_steps}, "
                f"start_factor={self.start_factor}"
                + ("" if self.spelled else " (arguments equal to their defaults left out)"))


LRS = st.sampled_from([0.1, 0.4, 0.01, 3e-4, 1.0, 0.05])
BASE_BATCHES = st.sampled_from([256, 256, 32, 128, 64])
FACTORS = st.sampled_from([0.1, 0.1, 0.25, 0.01, 0.5, 1.0])


@st.composite
def schedules(draw, min_groups: int = 1, min_warmup: int = 0, min_after: int = 0) -> Schedule:
    base_lrs = draw(st.lists(LRS, min_size=min_groups, max_size=3), label="base_lrs")
    base_batch = draw(BASE_BATCHES, label="base_batch_size")
    batch = draw(st.sampled_from([base_batch, base_batch * 2, base_batch * 8, base_batch // 2, 1024]),
                 label="batch_size")
    warmup = draw(st.one_of(st.just(5), st.integers(min_warmup, 7)), label="warmup_steps")
    after = draw(st.integers(min_after, 4), label="steps after the warmup")
    total = draw(st.one_of(st.just(warmup + after), st.integers(0, warmup + after)), label="total_steps")
    return Schedule(base_lrs, batch, total, base_batch, warmup, draw(FACTORS, label="start_factor"),
                    spelled=draw(st.booleans(), label="defaults spelled out"))


def ordinary(impl, schedule: Schedule, why: str):
    return anchored(lambda: schedule.call(impl.warmup_lr_trace), schedule.expected,
                    what=f"the lr trace of {schedule.text()} vs LinearLR's ({why})")


SPEC = Schedule([0.1, 0.01], 512, 6, 256, 4, 0.25)


@pytest.mark.weight(4)
@settings(max_examples=60)
@example(SPEC)
@example(Schedule([0.1], 256, 7, spelled=False))
@given(schedules())
def test_trace_matches_linear_lr(impl, schedule):
    assert_same(schedule.call(impl.warmup_lr_trace), schedule.expected(),
                what=f"the lr of every group before each optimizer step ({schedule.text()})")


@pytest.mark.weight(2)
@settings(max_examples=30)
@example(SPEC)
@given(schedules(min_groups=2))
def test_every_group_keeps_its_own_lr(impl, schedule):
    """Two or three groups with their own base lrs: param_groups is a list, each group is
    scaled and scheduled from its own lr."""
    schedule = replace(schedule, base_lrs=[lr * (i + 1) for i, lr in enumerate(schedule.base_lrs)])  # all differ
    assert_same(schedule.call(impl.warmup_lr_trace), schedule.expected(),
                what=f"the lr of each of {len(schedule.base_lrs)} groups ({schedule.text()}): "
                     "read and scale every optimizer.param_groups[i]['lr']")


@pytest.mark.weight(2)
@settings(max_examples=30)
@example(SPEC)
@given(schedules(min_warmup=1, min_after=1))
def test_the_first_step_trains_with_start_factor(impl, schedule):
    """optimizer.step() before scheduler.step(): step 0 uses start_factor times the peak."""
    schedule = replace(schedule, total_steps=max(schedule.total_steps, 1))  # SPEC is shared: never changed
    got = schedule.call(impl.warmup_lr_trace)
    first = [schedule.start_factor * peak for peak in schedule.peaks()]
    assert isinstance(got, list) and got, f"warmup_lr_trace returned {got!r}, expected a list of steps"
    assert_same(got[0], first, what=f"the lrs of the first step ({schedule.text()}): start_factor "
                                    "times the peak (record, optimizer.step(), then scheduler.step())")
    assert_same(got, schedule.expected(), what=f"the whole trace ({schedule.text()})")


@pytest.mark.weight(2)
@settings(max_examples=30)
@example(SPEC)
@given(schedules(min_warmup=1, min_after=2))
def test_after_the_warmup_every_group_stays_at_its_scaled_peak(impl, schedule):
    """From step warmup_steps on, the factor is 1: the lr is base lr * batch_size /
    base_batch_size (linear, not square-root scaling), and it grows no further."""
    schedule = replace(schedule, total_steps=schedule.warmup_steps + 3)
    got = schedule.call(impl.warmup_lr_trace)
    assert isinstance(got, list) and len(got) == schedule.total_steps, (
        f"warmup_lr_trace returned {got!r}; expected {schedule.total_steps} steps")
    for step in range(schedule.warmup_steps, schedule.total_steps):
        assert_same(got[step], schedule.peaks(),
                    what=f"the lrs of step {step}, after a warmup of {schedule.warmup_steps} steps "
                         f"({schedule.text()}): base lr * batch_size / base_batch_size")
    assert_ordinary(lambda: got, schedule.expected, what=f"the whole trace ({schedule.text()})")


@settings(max_examples=20)
@given(schedules())
def test_returns_lists_of_python_floats(impl, schedule):
    got = schedule.call(impl.warmup_lr_trace)
    assert type(got) is list and all(type(step) is list and all(type(lr) is float for lr in step)
                                     for step in got), (
        f"warmup_lr_trace returned {got!r}: expected a list (one entry per step) of lists of "
        "Python floats (one per group)")
    assert_ordinary(lambda: got, schedule.expected, what=f"the trace ({schedule.text()})")


BAD = {
    "batch_size": [0, -256],
    "base_batch_size": [0, -1],
    "warmup_steps": [-1],
    "total_steps": [-1],
    "start_factor": [0.0, -0.5, 1.5],
}


# The edge of what the spec allows, one step from each invalid value of BAD.
EDGES = {
    "batch_size": 1,
    "base_batch_size": 1,
    "warmup_steps": 0,
    "total_steps": 0,
    "start_factor": 1.0,
}


@settings(max_examples=25)
@example(SPEC)
@given(schedules(min_warmup=1, min_after=1))
def test_the_edges_of_the_valid_arguments_are_accepted(impl, schedule):
    """batch_size 1, base_batch_size 1, warmup_steps 0, total_steps 0, start_factor 1: each
    is valid (the ValueError starts one step further), and traced like any other value. Every
    edge in every example: a bound off by one at any of them fails."""
    with ordinary(impl, schedule, "beside the edge case"):
        for name, value in EDGES.items():
            edge = replace(schedule, **{name: value})
            try:
                got = edge.call(impl.warmup_lr_trace)
            except StudentError as err:
                raise AssertionError(
                    f"warmup_lr_trace raised {type(err.original).__name__} for {name}={value} "
                    f"({edge.text()}): {err.original}; the spec allows it (a ValueError only below 1 for "
                    "the batch sizes, below 0 for the step counts, outside (0, 1] for start_factor)") from None
            assert_same(got, edge.expected(), what=f"the lr trace at the edge of the valid arguments, "
                                                   f"{name}={value} ({edge.text()})")


@settings(max_examples=20)
@given(schedules())
def test_invalid_arguments_raise_value_error(impl, schedule):
    """Every invalid value of BAD in every example, one step past each edge: a bound off by
    one at any of them fails."""
    with ordinary(impl, schedule, "beside the error case"):
        for name, bad_values in BAD.items():
            for bad_value in bad_values:
                bad = replace(schedule, **{name: bad_value})
                with expect_raises(ValueError, when=f"{name}={bad_value}"):
                    bad.call(impl.warmup_lr_trace)
