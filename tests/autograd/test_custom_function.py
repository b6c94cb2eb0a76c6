"""autograd.Function by hand: a stable log-sum-exp (against torch.logsumexp, values and
gradients, and torch.autograd.gradcheck in float64) and a straight-through clamp (the
gradient passes through unchanged)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch.autograd.gradcheck import GradcheckError

from grader.testing import assert_same
from tests.numerics import manual_seed, overflowed, random_weights
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, sampled, shapes

_BY_HAND = "compute it from amax, exp, sum and log inside LogSumExp.forward"

pytestmark = pytest.mark.exercise(points=15, forbid={
    "torch.logsumexp": _BY_HAND,
    "torch.Tensor.logsumexp": _BY_HAND,
    "torch.special.logsumexp": _BY_HAND,
    # the capability: x - log_softmax(x) and logcumsumexp's last entry are log-sum-exp too
    "torch.log_softmax": _BY_HAND,
    "torch.Tensor.log_softmax": _BY_HAND,
    "F.log_softmax": _BY_HAND,
    "torch.special.log_softmax": _BY_HAND,
    "torch.logcumsumexp": _BY_HAND,
    "torch.Tensor.logcumsumexp": _BY_HAND,
})

CPU_TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5)}
# Not widened in an official grading (see test_logsumexp_passes_gradcheck).
NO_OFFSET = st.just(0.0)
GRADCHECK_SHAPES = st.lists(st.integers(1, 2), min_size=1, max_size=2).map(tuple)


@dataclass
class Case:
    x: torch.Tensor
    dim: int
    keepdim: bool = False
    # Whether a call spells out keepdim when it equals its default (False) or leaves it out.
    spelled: bool = True

    def call(self, logsumexp, x: torch.Tensor | None = None):
        x = self.x.clone() if x is None else x
        if self.spelled or self.keepdim:
            return logsumexp(x, self.dim, self.keepdim)
        return logsumexp(x, self.dim)

    def expected(self) -> torch.Tensor:
        return torch.logsumexp(self.x, self.dim, self.keepdim)

    def text(self) -> str:
        return (f"x of shape {list(self.x.shape)} ({self.x.dtype}), dim={self.dim}, keepdim={self.keepdim}"
                + ("" if self.spelled else " (left out)"))

    def tolerance(self) -> dict:
        return CPU_TOLERANCE.get(self.x.dtype, {})


@st.composite
def cases(draw, dtypes=(torch.float64, torch.float32), low: float = -20.0, high: float = 20.0,
          shape_strategy=None, offsets=NO_OFFSET) -> Case:
    shape = draw(shape_strategy or shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
    dtype = draw(sampled(tuple(dtypes)), label="dtype")
    x = draw(float_tensors(shape, dtype=dtype, low=low, high=high), label="x")
    x = x + draw(offsets, label="offset")
    dim = draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    return Case(x, dim, draw(st.booleans(), label="keepdim"), draw(st.booleans(), label="keepdim spelled out"))


def grads(fn, case: Case, *, student: bool) -> torch.Tensor:
    """The gradient w.r.t. x of a seeded random weighted sum of ``fn``'s answer."""
    x = case.x.clone().requires_grad_()
    out = case.call(fn, x)
    if student and not (isinstance(out, torch.Tensor) and out.requires_grad):
        raise AssertionError("the output is not connected to x: LogSumExp.apply(x, dim, keepdim) "
                             "returns a tensor with a grad_fn when x requires grad")
    manual_seed(1)
    (g,) = torch.autograd.grad((out * random_weights(out)).sum(), x)
    return g


def ordinary(impl, case: Case, why: str):
    return anchored(lambda: case.call(impl.logsumexp), case.expected, **case.tolerance(),
                    what=f"logsumexp ({case.text()}) vs torch.logsumexp ({why})")


SPEC = Case(torch.tensor([[0.0, 0.0], [1000.0, 1000.0]]), 1, spelled=False)


# ------------------------------------------------------------------ log-sum-exp

@pytest.mark.weight(3)
@settings(max_examples=40)
@example(SPEC)
@given(cases())
def test_logsumexp_matches_torch(impl, case):
    assert_same(case.call(impl.logsumexp), case.expected(), **case.tolerance(),
                what=f"logsumexp ({case.text()}) vs torch.logsumexp")


@pytest.mark.weight(3)
@settings(max_examples=30)
@example(SPEC)
@given(cases())
def test_logsumexp_gradient_matches_torch(impl, case):
    assert_same(grads(impl.logsumexp, case, student=True), grads(torch.logsumexp, case, student=False),
                **case.tolerance(),
                what=f"the gradient w.r.t. x of a weighted sum of logsumexp ({case.text()}): "
                     "grad * exp(x - out), grad given its dim back when keepdim is False")


@pytest.mark.weight(2)
@settings(max_examples=10)
@given(cases(dtypes=(torch.float64,), low=-3.0, high=3.0, shape_strategy=GRADCHECK_SHAPES))
def test_logsumexp_passes_gradcheck(impl, case):
    """torch.autograd.gradcheck in float64: the backward you wrote against finite differences
    of the forward you wrote (x of at most 4 elements: gradcheck calls the function twice per
    element, and a sandboxed worker keeps the graphs of its last 16 calls)."""
    x = case.x.clone().requires_grad_()
    try:
        torch.autograd.gradcheck(lambda t: case.call(impl.logsumexp, t), (x,), check_undefined_grad=False)
    except GradcheckError as exc:
        raise AssertionError(f"torch.autograd.gradcheck ({case.text()}): backward does not match "
                             f"the forward's finite differences: {str(exc)[:600]}") from None
    assert_ordinary(lambda: case.call(impl.logsumexp), case.expected, what=f"logsumexp ({case.text()})")


@pytest.mark.weight(2)
@settings(max_examples=25)
@example(SPEC)
@given(cases(low=-5.0, high=5.0, offsets=st.sampled_from([1000.0, -1000.0, 300.0, 100.0])))
def test_large_inputs_stay_finite(impl, case):
    """x around +-1000 (+-100 and 300 too): exp(x) overflows float32 past 88 and float64 past
    709, so the forward subtracts the max, and the backward uses exp(x - out), never exp(x)."""
    got, expected = case.call(impl.logsumexp), case.expected()
    assert_same(got, expected, **case.tolerance(),
                what=f"logsumexp of large inputs ({case.text()})" + (
                    ": inf or nan, where exp overflowed: subtract the max before exp"
                    if overflowed(got, expected) else ""))
    got, expected = grads(impl.logsumexp, case, student=True), grads(torch.logsumexp, case, student=False)
    assert_same(got, expected, **case.tolerance(),
                what=f"its gradient ({case.text()})" + (
                    ": inf or nan, where exp overflowed: exp(x - out), no exp(x)" if overflowed(got, expected) else ""))


@settings(max_examples=15)
@given(cases())
def test_x_is_left_alone(impl, case):
    """No in-place change of the input, in forward or in backward: x is the same after both."""
    x = case.x.clone().requires_grad_()
    out = case.call(impl.logsumexp, x)
    assert_arguments_unchanged(impl, what="x after logsumexp (compute into new tensors: x - m, "
                                          "not x.sub_(m))")
    assert isinstance(out, torch.Tensor) and out.requires_grad, "the output is not connected to x"
    out.sum().backward()
    assert_same(x.detach(), case.x, what="x after logsumexp and a backward through it")
    assert_ordinary(lambda: out.detach(), case.expected, **case.tolerance(),
                    what=f"the same call's answer ({case.text()})")


@settings(max_examples=10)
@given(cases())
def test_no_gradient_wanted(impl, case):
    """x without requires_grad: the answer is a plain tensor with the right values (backward
    never runs), and the same x requiring grad gets the right gradient."""
    out = case.call(impl.logsumexp)
    assert isinstance(out, torch.Tensor) and not out.requires_grad, (
        "logsumexp of an x that does not require grad returned a tensor that requires grad")
    assert_same(out, case.expected(), **case.tolerance(), what=f"logsumexp ({case.text()})")
    assert_same(grads(impl.logsumexp, case, student=True), grads(torch.logsumexp, case, student=False),
                **case.tolerance(), what=f"the gradient when x requires grad ({case.text()})")


# ------------------------------------------------------------------ straight-through clamp

BOUNDS = st.sampled_from([(-1.0, 1.0), (0.0, 6.0), (-0.5, 0.25), (2.0, 2.0), (-3.0, 0.0)])


@pytest.mark.weight(3)
@settings(max_examples=30)
@example(torch.tensor([-2.0, 0.5, 3.0]), (-1.0, 1.0))
@given(float_tensors(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), low=-4, high=8), BOUNDS)
def test_clamp_ste_clamps_and_passes_the_gradient_through(impl, x, bounds):
    lo, hi = bounds
    leaf = x.clone().requires_grad_()
    out = impl.clamp_ste(leaf, lo, hi)
    assert_same(out.detach() if isinstance(out, torch.Tensor) else out, x.clamp(lo, hi),
                what=f"clamp_ste(x, {lo}, {hi}) forward: x.clamp(min, max)")
    if not out.requires_grad:
        raise AssertionError("the output of clamp_ste is not connected to x")
    manual_seed(1)
    weights = random_weights(out)
    (g,) = torch.autograd.grad((out * weights).sum(), leaf)
    outside = int(((x < lo) | (x > hi)).sum())
    assert_same(g, weights, what=f"the gradient of a weighted sum of clamp_ste(x, {lo}, {hi}) w.r.t. x "
                                 f"({outside} element(s) outside the range): the incoming gradient "
                                 "unchanged, everywhere (not clamp's zeros outside)")


# ------------------------------------------------------------------ on the GPU

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=20)
@given(cases(dtypes=(torch.float32,), offsets=st.sampled_from([0.0, 80.0, -500.0])))
def test_on_gpu(impl, case):
    """float32 on the GPU, large inputs included: the answer and its gradient on the GPU,
    equal to torch.logsumexp's in float64 on the CPU."""
    x = case.x.cuda().requires_grad_()
    out = case.call(impl.logsumexp, x)
    assert isinstance(out, torch.Tensor) and out.device.type == "cuda" and out.requires_grad, (
        "logsumexp on a CUDA x must return a CUDA tensor connected to x")
    x64 = case.x.double().requires_grad_()
    expected = torch.logsumexp(x64, case.dim, case.keepdim)
    manual_seed(1)
    weights = torch.randn(out.shape, dtype=torch.float64)
    (g,) = torch.autograd.grad((out * weights.to(out)).sum(), x)
    (e,) = torch.autograd.grad((expected * weights).sum(), x64)
    tol = dict(rtol=1e-5, atol=1e-5)
    assert_same(out.detach().cpu().double(), expected.detach(), what=f"logsumexp on the GPU ({case.text()})", **tol)
    assert g.device.type == "cuda", "the gradient must stay on the GPU"
    assert_same(g.cpu().double(), e, what=f"its gradient on the GPU ({case.text()})", **tol)
