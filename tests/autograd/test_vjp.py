"""Vector-Jacobian products and the Jacobian from them, with torch.autograd.grad / backward(v),
against torch.autograd.functional.vjp and jacobian; the caller's module and x left alone."""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.autograd import functional

from grader.testing import assert_same, expect_raises
from tests.numerics import manual_seed
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import any_layout, copy_in_layout, float_tensors, mismatched_shapes, sampled

_BY_HAND = "run f on a fresh leaf and call torch.autograd.grad(out, leaf, v) (or out.backward(v, inputs=[leaf]))"

pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.autograd.functional.vjp": _BY_HAND,
    "torch.autograd.functional.jacobian": _BY_HAND + ", once per unit vector v",
    "torch.func.vjp": _BY_HAND,
    "torch.func.jacrev": _BY_HAND + ", once per unit vector v",
    "torch.func.jacfwd": _BY_HAND + ", once per unit vector v",
    # the capability: derivatives by transform, torch's other routes to v^T J and J
    "torch.func.grad": _BY_HAND + ", once per unit vector v",
    "torch.func.grad_and_value": _BY_HAND + ", once per unit vector v",
    "torch.func.jvp": _BY_HAND + ", once per unit vector v",
    "torch.func.linearize": _BY_HAND + ", once per unit vector v",
    "torch.func.hessian": _BY_HAND + ", once per unit vector v",
    "torch.autograd.functional": _BY_HAND + ", once per unit vector v",  # its vhp, hvp, jvp, hessian too
})

ACTIVATIONS = (nn.Tanh, nn.Sigmoid, nn.Softplus, nn.ELU)


@dataclass
class Case:
    f: nn.Sequential
    x: torch.Tensor
    v: torch.Tensor
    init_seed: int = 0  # torch.manual_seed before building f (shown in counterexamples)

    def text(self) -> str:
        layers = ", ".join(type(m).__name__ + (f"({m.in_features}, {m.out_features})" if isinstance(m, nn.Linear) else "")
                           for m in self.f)
        laid = "" if self.x.is_contiguous() else f" and strides {list(self.x.stride())}"
        v_dtype = "" if self.v.dtype == self.x.dtype else f", v of dtype {self.v.dtype}"
        return f"f = Sequential({layers}), x of shape {list(self.x.shape)}{laid}{v_dtype}"

    def args(self) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
        """Fresh copies: x in the memory layout drawn for it."""
        return copy.deepcopy(self.f), copy_in_layout(self.x), self.v.clone()

    def expected_vjp(self) -> tuple[torch.Tensor, torch.Tensor]:
        f, x, v = self.args()
        return functional.vjp(f, x, v)

    def expected_jacobian(self) -> torch.Tensor:
        """torch.autograd.functional.jacobian; for an output with no elements (which it
        cannot stack) the empty Jacobian of shape (*f(x).shape, *x.shape) in f(x)'s dtype."""
        f, x, _ = self.args()
        with torch.no_grad():
            out = f(x)
        if out.numel() == 0:
            return torch.zeros(*out.shape, *x.shape, dtype=out.dtype)
        return functional.jacobian(f, x)


BATCHES = ((), (1,), (2,))
# Corners of "any input f takes": inputs or outputs with no elements.
EMPTY = ("none", "an empty batch", "no input features", "no output features", "an empty batch of (2, 0)")


@st.composite
def cases(draw, corners: bool = False) -> Case:
    """f = Linear, activation, Linear in float64, x with batch dims, v like f(x). With
    ``corners``: also inputs and outputs with no elements (an empty batch, no input or no
    output features), x in other memory layouts (a transposed or sliced view), and v in
    float32 (autograd takes v in another dtype: the product is in x's dtype)."""
    empty = draw(sampled(EMPTY), label="no elements in") if corners else "none"
    n_in, hidden, n_out = (draw(st.integers(1, 3), label="in"), draw(st.integers(1, 4), label="hidden"),
                           draw(st.integers(1, 3), label="out"))
    n_in, n_out = (0 if empty == "no input features" else n_in), (0 if empty == "no output features" else n_out)
    activation = draw(sampled(ACTIVATIONS), label="activation")
    seed = draw(st.integers(0, 2**16), label="init seed")
    f = seeded_mlp(n_in, hidden, n_out, activation, seed)
    batch = {"an empty batch": (0,), "an empty batch of (2, 0)": (2, 0)}.get(empty) or draw(
        sampled(BATCHES), label="batch dims")
    x = draw(float_tensors((*batch, n_in), low=-2, high=2), label="x")
    v_dtype = draw(sampled((torch.float64, torch.float32)), label="v's dtype") if corners else torch.float64
    v = draw(float_tensors((*batch, n_out), dtype=v_dtype, low=-2, high=2), label="v")
    if corners:
        x = draw(any_layout(x, label="x"))
    return Case(f, x, v, seed)


def seeded_mlp(n_in: int, hidden: int, n_out: int, activation: type[nn.Module] = nn.Tanh,
               seed: int = 0) -> nn.Sequential:
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Initializing zero-element tensors is a no-op"
        manual_seed(seed)
        return nn.Sequential(nn.Linear(n_in, hidden), activation(), nn.Linear(hidden, n_out)).double()


def corner_case(n_in: int, n_out: int, batch: tuple[int, ...], *, transposed: bool = False,
                v_dtype: torch.dtype = torch.float64) -> Case:
    """A fixed case at a corner: no elements in x or f(x), x transposed in memory (a batch
    of 2 rows laid out column by column), or v in float32."""
    with torch.random.fork_rng(devices=[]):
        manual_seed(1)
        x = torch.rand(*batch, n_in, dtype=torch.float64) * 4 - 2
        v = (torch.rand(*batch, n_out, dtype=torch.float64) * 4 - 2).to(v_dtype)
    if transposed:
        x = x.mT.contiguous().mT
    return Case(seeded_mlp(n_in, 3, n_out), x, v, 0)


ORDINARY_CASES = cases()
ALL_CASES = cases(corners=True)


def spec_case() -> Case:
    f = nn.Sequential(nn.Linear(2, 2, bias=False))
    with torch.no_grad():
        f[0].weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    return Case(f, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 0.0]))


def ordinary_vjp(impl, case: Case, why: str):
    return anchored(lambda: impl.vjp(*case.args()), case.expected_vjp,
                    what=f"vjp ({case.text()}) vs torch.autograd.functional.vjp ({why})")


@pytest.mark.weight(3)
@settings(max_examples=40)
@example(spec_case())
@example(corner_case(2, 2, (0,)))  # no elements in x or f(x)
@example(corner_case(3, 2, (2,), v_dtype=torch.float32))  # v in another dtype
@example(corner_case(3, 2, (2,), transposed=True))
@given(ALL_CASES)
def test_vjp_matches_autograd_functional(impl, case):
    assert_same(impl.vjp(*case.args()), case.expected_vjp(),
                what=f"(f(x), v^T J) returned by vjp ({case.text()}), vs torch.autograd.functional.vjp")


@pytest.mark.weight(3)
@settings(max_examples=30)
@example(spec_case())
@example(corner_case(2, 2, (0,)))  # no elements in x or f(x)
@example(corner_case(2, 0, (2,)))  # no elements in f(x)
@example(corner_case(0, 2, (2,)))  # no elements in x
@example(corner_case(3, 2, (2,), transposed=True))
@given(ALL_CASES)
def test_jacobian_matches_autograd_functional(impl, case):
    """Also where f(x) has no elements: no rows to stack, and still a tensor of shape
    (*f(x).shape, *x.shape) in f(x)'s dtype."""
    f, x, _ = case.args()
    assert_same(impl.jacobian(f, x), case.expected_jacobian(),
                what=f"jacobian ({case.text()}): shape (*f(x).shape, *x.shape) in f(x)'s dtype, vs "
                     "torch.autograd.functional.jacobian (are the rows sums of earlier rows? "
                     ".grad accumulates)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(ORDINARY_CASES, st.booleans())
def test_f_and_x_are_left_alone(impl, case, stale):
    """The module's parameters and their .grad (None, or stale values), and x with its
    requires_grad, come back as they went in; the same calls' answers are the oracle's."""
    f, x, v = case.args()
    if stale:
        for p in f.parameters():
            p.grad = torch.ones_like(p)
    got_vjp = impl.vjp(f, x, v)
    assert_arguments_unchanged(impl, what="f (its parameters and their .grad) and x after vjp "
                                          "(ask autograd for x's gradient only: torch.autograd.grad)")
    got_jacobian = impl.jacobian(f, x)
    assert_arguments_unchanged(impl, what="f (its parameters and their .grad) and x after jacobian")
    assert_ordinary(lambda: got_vjp, case.expected_vjp, what=f"the same vjp call's answer ({case.text()})")
    assert_ordinary(lambda: got_jacobian, case.expected_jacobian,
                    what=f"the same jacobian call's answer ({case.text()})")


@settings(max_examples=15)
@given(ORDINARY_CASES)
def test_answers_are_detached(impl, case):
    """Plain values: neither f(x), nor the product, nor the Jacobian keeps a graph."""
    got = impl.vjp(*case.args())
    f, x, _ = case.args()
    jac = impl.jacobian(f, x)
    for name, t in (("f(x)", got[0] if isinstance(got, tuple) and got else None),
                    ("v^T J", got[1] if isinstance(got, tuple) and len(got) > 1 else None), ("the Jacobian", jac)):
        assert isinstance(t, torch.Tensor), f"{name}: expected a tensor, got {type(t).__name__}"
        assert not t.requires_grad, (f"{name} requires grad: return plain values (detach; "
                                     "torch.autograd.grad without create_graph gives them)")
    assert_ordinary(lambda: got, case.expected_vjp, what=f"the same vjp call's answer ({case.text()})")
    assert_ordinary(lambda: jac, case.expected_jacobian, what=f"the same jacobian call's answer ({case.text()})")


@settings(max_examples=15)
@given(ORDINARY_CASES, st.data())
def test_v_of_the_wrong_shape_raises_value_error(impl, case, data):
    shape = data.draw(mismatched_shapes(tuple(case.v.shape)), label="v's shape")
    bad = torch.ones(shape, dtype=case.v.dtype)
    f, x, _ = case.args()
    with ordinary_vjp(impl, case, "beside the error case"):
        with expect_raises(ValueError, when=f"v has shape {list(shape)} and f(x) {list(case.v.shape)}"):
            impl.vjp(f, x, bad)


# ------------------------------------------------------------------ on the GPU

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=15)
@given(ORDINARY_CASES)
def test_on_gpu(impl, case):
    """f, x and v on the GPU: every answer on the GPU too (a unit vector made on the CPU
    cannot meet a CUDA output), in float64, equal to the CPU oracle."""
    f, x, v = case.args()
    f, x, v = f.cuda(), x.cuda(), v.cuda()
    got = impl.vjp(f, x, v)
    jac = impl.jacobian(f, x)
    assert isinstance(got, tuple) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got), (
        f"vjp returned {type(got).__name__}; expected (f(x), v^T J)")
    for name, t in (("f(x)", got[0]), ("v^T J", got[1]), ("the Jacobian", jac)):
        assert isinstance(t, torch.Tensor) and t.device.type == "cuda", f"{name} is not on the GPU"
    assert_same((got[0].cpu(), got[1].cpu()), case.expected_vjp(), what=f"vjp on the GPU ({case.text()})")
    assert_same(jac.cpu(), case.expected_jacobian(), what=f"jacobian on the GPU ({case.text()})")
