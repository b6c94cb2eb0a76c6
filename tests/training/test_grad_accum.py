"""Gradient accumulation: micro-batch losses scaled by n_i / N give the gradients of one step on the concatenated batch."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import BatchSizes, assert_same, expect_raises
from tests.numerics import assert_same_grads, grads_of, manual_seed
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, int_tensors

pytestmark = pytest.mark.exercise(points=10, mutates={"accumulated_gradients": ("grads",)})

LOSSES = ["mse_loss", "l1_loss", "cross_entropy"]
PARAM_NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def check_grads(got: object, expected: list[torch.Tensor | None], where: str) -> None:
    assert_same_grads(got, expected, PARAM_NAMES, where)


# ------------------------------------------------------------------ cases

@dataclass
class AccumCase:
    """A float64 Linear/Tanh/Linear model and its micro-batches (sizes may differ)."""

    model: nn.Sequential
    loss_name: str
    micro_batches: list[tuple[torch.Tensor, torch.Tensor]]
    frozen: tuple[str, ...] = ()
    init_seed: int = 0  # torch.manual_seed before building the model (shown in counterexamples)

    def copies(self) -> tuple[nn.Module, list[tuple[torch.Tensor, torch.Tensor]]]:
        """A fresh model and cloned micro-batches, for one call."""
        return copy.deepcopy(self.model), [(x.clone(), y.clone()) for x, y in self.micro_batches]

    def note(self) -> str:
        sizes = [x.shape[0] for x, _ in self.micro_batches]
        frozen = f", frozen: {', '.join(self.frozen)}" if self.frozen else ""
        return f"{self.loss_name}, micro-batch sizes {sizes}{frozen}"


@st.composite
def accum_cases(draw, max_batches: int = 4, allow_frozen: bool = True) -> AccumCase:
    loss_name = draw(st.sampled_from(LOSSES), label="loss_name")
    classify = loss_name == "cross_entropy"
    n_in, hidden = draw(st.integers(1, 3), label="in"), draw(st.integers(1, 4), label="hidden")
    n_out = draw(st.integers(2 if classify else 1, 3), label="out")
    seed = draw(st.integers(0, 2**16), label="init seed")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        model = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out)).double()
    frozen = (tuple(sorted(draw(st.lists(st.sampled_from(PARAM_NAMES), max_size=1), label="frozen")))
              if allow_frozen else ())
    for name, param in model.named_parameters():
        param.requires_grad_(name not in frozen)
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_batches), label="micro-batch sizes")
    batches = []
    for i, n in enumerate(sizes):
        x = draw(float_tensors((n, n_in), low=-3, high=3), label=f"inputs {i}")
        y = draw(int_tensors((n,), 0, n_out - 1) if classify
                 else float_tensors((n, n_out), low=-3, high=3), label=f"targets {i}")
        batches.append((x, y))
    return AccumCase(model, loss_name, batches, frozen, seed)


def one_big_batch_grads(case: AccumCase, device: str = "cpu") -> list[torch.Tensor | None]:
    """The gradients of one backward on the concatenation of every micro-batch."""
    model = copy.deepcopy(case.model).to(device)
    x = torch.cat([x for x, _ in case.micro_batches]).to(device)
    y = torch.cat([y for _, y in case.micro_batches]).to(device)
    getattr(F, case.loss_name)(model(x), y).backward()
    return [p.grad for p in model.parameters()]


# ------------------------------------------------------------------ properties

def spec_case() -> AccumCase:
    """The spec's example: one weight w = 1, predictions w * x, targets 0, micro-batches of
    1 and 2 samples: the gradient 6 of the mean over all three (not 10, not 5)."""
    model = nn.Sequential(nn.Linear(1, 1, bias=False)).double()
    with torch.no_grad():
        model[0].weight.fill_(1.0)
    x1, x2 = torch.tensor([[1.0]], dtype=torch.float64), torch.full((2, 1), 2.0, dtype=torch.float64)
    return AccumCase(model, "mse_loss", [(x1, torch.zeros_like(x1)), (x2, torch.zeros_like(x2))])


@pytest.mark.weight(4)
@settings(max_examples=30)
@example(spec_case())
@given(accum_cases())
def test_gradients_equal_one_step_on_the_concatenated_batch(impl, case):
    model, batches = case.copies()
    impl.accumulated_gradients(model, case.loss_name, batches)
    check_grads(grads_of(model), one_big_batch_grads(case),
                      f"p.grad after the call ({case.note()}), vs one backward on the "
                      "concatenated batch")


@settings(max_examples=10)
@given(accum_cases())
def test_returns_the_gradients(impl, case):
    model, batches = case.copies()
    got = impl.accumulated_gradients(model, case.loss_name, batches)
    check_grads(got, one_big_batch_grads(case),
                      f"the returned [p.grad for p in model.parameters()] ({case.note()})")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(accum_cases())
def test_stale_gradients_are_discarded(impl, case):
    """Every parameter arrives holding an old .grad, a frozen one included: afterwards the
    trainable ones hold the big batch's gradients and a frozen one holds None, as after
    model.zero_grad() and one backward on the concatenated batch."""
    model, batches = case.copies()
    for param in model.parameters():
        param.grad = 10 * torch.randn_like(param)
    impl.accumulated_gradients(model, case.loss_name, batches)
    check_grads(grads_of(model), one_big_batch_grads(case),
                f"p.grad after the call, when the model arrived holding old gradients "
                f"({case.note()}; clear every .grad once, before the first backward: "
                "model.zero_grad() sets them all to None, frozen ones included)")


@settings(max_examples=15)
@given(accum_cases(allow_frozen=False))
def test_one_forward_per_micro_batch(impl, case):
    """The forward calls, then the same call's gradients against the big batch's."""
    model, batches = case.copies()
    recorder = BatchSizes()  # a lambda could not cross into a sandboxed worker
    model.register_forward_pre_hook(recorder)
    impl.accumulated_gradients(model, case.loss_name, batches)
    sizes, seen = [x.shape[0] for x, _ in batches], recorder.sizes
    assert seen == sizes, (
        f"the model ran forward on batches of {seen} sample(s); with micro-batches of {sizes} "
        "it must run once per micro-batch, on that micro-batch alone, in order (one big "
        "forward on the concatenation needs the memory accumulation is there to save)")
    check_grads(grads_of(model), one_big_batch_grads(case),
                f"p.grad after the call ({case.note()}), vs one backward on the concatenated batch")


@settings(max_examples=10)
@given(accum_cases())
def test_parameters_unchanged(impl, case):
    """The weights stay as they were, and the same call leaves the big batch's gradients."""
    model, batches = case.copies()
    impl.accumulated_gradients(model, case.loss_name, batches)
    assert_arguments_unchanged(impl, what="the model's weights and the micro-batches after the call "
                                          "(accumulate only: no optimizer step)")
    for (name, got), original in zip(model.named_parameters(), case.model.parameters()):
        assert_same(got.detach(), original.detach(),
                    what=f"parameter {name} after the call (accumulate only: no optimizer step)")
    assert_ordinary(lambda: check_grads(grads_of(model), one_big_batch_grads(case),
                                        f"p.grad after the call ({case.note()}), vs one backward on the "
                                        "concatenated batch"))


@settings(max_examples=5)
@given(accum_cases(max_batches=1), accum_cases(allow_frozen=False))
def test_no_micro_batch_raises_value_error(impl, case, ordinary):
    model, _ = case.copies()

    def ordinary_grads():
        good_model, batches = ordinary.copies()
        impl.accumulated_gradients(good_model, ordinary.loss_name, batches)
        return grads_of(good_model)

    with anchored(ordinary_grads, lambda: None,
                  compare=lambda got, _, what: check_grads(got, one_big_batch_grads(ordinary), what),
                  what=f"p.grad after an ordinary call ({ordinary.note()}) beside the error case"):
        with expect_raises(ValueError, when="micro_batches is empty"):
            impl.accumulated_gradients(model, case.loss_name, [])


# ------------------------------------------------------------------ GPU

def check_float32_on_device(accumulated_gradients, case: AccumCase, device: str) -> None:
    """float32 on ``device`` against the float64 CPU big-batch gradient, from the same
    float32-representable weights and data; the gradients stay on the device."""
    rounded = AccumCase(copy.deepcopy(case.model).float().double(), case.loss_name,
                        [(x.float().double(), y if y.dtype == torch.int64 else y.float().double())
                         for x, y in case.micro_batches], case.frozen)
    expected = one_big_batch_grads(rounded)
    model = copy.deepcopy(rounded.model).to(device, torch.float32)
    batches = [(x.to(device, torch.float32), y.to(device) if y.dtype == torch.int64
                else y.to(device, torch.float32)) for x, y in rounded.micro_batches]
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # no TF32 in the float32 matmuls
    try:
        accumulated_gradients(model, case.loss_name, batches)
    finally:
        torch.set_float32_matmul_precision(previous)
    for name, g, e in zip(PARAM_NAMES, grads_of(model), expected):
        if e is None:
            assert g is None, f"frozen parameter {name} got a gradient on {device}"
            continue
        assert isinstance(g, torch.Tensor) and g.device.type == device, (
            f"the gradient of {name} is on {getattr(g, 'device', None)}, expected {device}")
        assert_same(g.cpu().double(), e, what=f"float32 gradient of {name} on {device} "
                    f"({case.note()}, vs the float64 big batch)", rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=15)
@given(accum_cases())
def test_float32_on_gpu_matches_float64_big_batch(impl, case):
    check_float32_on_device(impl.accumulated_gradients, case, "cuda")
