"""Vector-Jacobian products and the Jacobian from them, with torch.autograd.grad / backward(v),
against torch.autograd.functional.vjp and jacobian; the caller's module and x left alone."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.autograd import functional

from grader.contract.expect import assert_same, expect_raises
from tests.numerics import manual_seed
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, mismatched_shapes, sampled

_BY_HAND = "run f on a fresh leaf and call torch.autograd.grad(out, leaf, v) (or out.backward(v, inputs=[leaf]))"

pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.autograd.functional.vjp": _BY_HAND,
    "torch.autograd.functional.jacobian": _BY_HAND + ", once per unit vector v",
    "torch.func.vjp": _BY_HAND,
    "torch.func.jacrev": _BY_HAND + ", once per unit vector v",
    "torch.func.jacfwd": _BY_HAND + ", once per unit vector v",
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
        return f"f = Sequential({layers}), x of shape {list(self.x.shape)}"

    def args(self) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
        return copy.deepcopy(self.f), self.x.clone(), self.v.clone()

    def expected_vjp(self) -> tuple[torch.Tensor, torch.Tensor]:
        f, x, v = self.args()
        return functional.vjp(f, x, v)

    def expected_jacobian(self) -> torch.Tensor:
        f, x, _ = self.args()
        return functional.jacobian(f, x)


@st.composite
def cases(draw, max_batch: int = 2) -> Case:
    n_in, hidden, n_out = (draw(st.integers(1, 3), label="in"), draw(st.integers(1, 4), label="hidden"),
                           draw(st.integers(1, 3), label="out"))
    activation = draw(sampled(ACTIVATIONS), label="activation")
    seed = draw(st.integers(0, 2**16), label="init seed")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        f = nn.Sequential(nn.Linear(n_in, hidden), activation(), nn.Linear(hidden, n_out)).double()
    batch = draw(st.sampled_from([(), (1,), (2,), (max_batch,)]), label="batch dims")
    x = draw(float_tensors((*batch, n_in), low=-2, high=2), label="x")
    v = draw(float_tensors((*batch, n_out), low=-2, high=2), label="v")
    return Case(f, x, v, seed)


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
@given(cases())
def test_vjp_matches_autograd_functional(impl, case):
    assert_same(impl.vjp(*case.args()), case.expected_vjp(),
                what=f"(f(x), v^T J) returned by vjp ({case.text()}), vs torch.autograd.functional.vjp")


@pytest.mark.weight(3)
@settings(max_examples=30)
@example(spec_case())
@given(cases())
def test_jacobian_matches_autograd_functional(impl, case):
    f, x, _ = case.args()
    assert_same(impl.jacobian(f, x), case.expected_jacobian(),
                what=f"jacobian ({case.text()}): shape (*f(x).shape, *x.shape), vs "
                     "torch.autograd.functional.jacobian (are the rows sums of earlier rows? "
                     ".grad accumulates)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(cases(), st.booleans())
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
@given(cases())
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
@given(cases(), st.data())
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
@given(cases())
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
