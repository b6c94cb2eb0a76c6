"""Gradient averaging for data parallelism: all_reduce each .grad, divide by world size; equals the full-batch gradient."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same
from tests.numerics import assert_same_grads, grads_of, manual_seed
from tests.properties import assert_arguments_unchanged, assert_ordinary_answer
from tests.strategies import float_tensors, relaid

pytestmark = pytest.mark.exercise(points=10, forbid={
    "nn.parallel.DistributedDataParallel": "average the gradients yourself: all_reduce each "
                                           "p.grad that is not None, then divide by world_size",
}, mutates={"average_gradients": ("grads",)})

PARAM_NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def check_grads(got: object, expected: list[torch.Tensor | None], where: str) -> None:
    assert_same_grads(got, expected, PARAM_NAMES, where)


# ------------------------------------------------------------------ cases

@dataclass
class SyncCase:
    """A float64 Linear/Tanh/Linear model (no gradients yet) and one equal-size shard of
    (inputs, targets) per rank; some parameters may be frozen."""

    model: nn.Sequential
    shards: list[tuple[torch.Tensor, torch.Tensor]]
    frozen: tuple[str, ...]
    init_seed: int = 0  # torch.manual_seed before building the model (shown in counterexamples)
    column_major: tuple[str, ...] = ()  # weights stored transposed: their .grad is too

    @property
    def world(self) -> int:
        return len(self.shards)

    def note(self) -> str:
        frozen = f", frozen: {', '.join(self.frozen)}" if self.frozen else ""
        laid = (f", stored transposed (non-contiguous .grad): {', '.join(self.column_major)}"
                if self.column_major else "")
        return f"{self.world} rank(s) of {self.shards[0][0].shape[0]} sample(s) each{frozen}{laid}"


@st.composite
def sync_cases(draw, max_world: int = 4, frozen: st.SearchStrategy | None = None) -> SyncCase:
    world = draw(st.integers(1, max_world), label="ranks")
    per_rank = draw(st.integers(1, 3), label="samples per rank")
    n_in, hidden, n_out = (draw(st.integers(1, 3), label="in"), draw(st.integers(1, 4), label="hidden"),
                           draw(st.integers(1, 2), label="out"))
    seed = draw(st.integers(0, 2**16), label="init seed")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        model = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out)).double()
    if frozen is None:
        frozen = st.lists(st.sampled_from(PARAM_NAMES), max_size=2, unique=True)
    frozen_names = tuple(sorted(draw(frozen, label="frozen parameters")))
    # A weight kept in column-major memory (as a transposed, tied or imported weight may be):
    # backward gives it a .grad with the same strides, which .view(-1) refuses.
    column_major = tuple(sorted(draw(st.lists(st.sampled_from(["0.weight", "2.weight"]), max_size=2,
                                              unique=True), label="weights stored transposed")))
    for name in column_major:
        layer = model[int(name[0])]
        layer.weight = nn.Parameter(relaid(layer.weight, "permuted"))
    for name, param in model.named_parameters():
        param.requires_grad_(name not in frozen_names)
    shards = [(draw(float_tensors((per_rank, n_in), low=-3, high=3), label=f"rank {r} inputs"),
               draw(float_tensors((per_rank, n_out), low=-3, high=3), label=f"rank {r} targets"))
              for r in range(world)]
    return SyncCase(model, shards, frozen_names, seed, column_major)


def backward_on(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> nn.Module:
    """``model`` after ``mse_loss(model(x), y).backward()`` (a mean over samples)."""
    loss = F.mse_loss(model(x), y)
    if loss.requires_grad:  # every parameter frozen: nothing to differentiate
        loss.backward()
    return model


def rank_models(case: SyncCase, device: str = "cpu", dtype: torch.dtype = torch.float64) -> list[nn.Module]:
    """Each rank's copy of the model, holding the gradient of its own shard."""
    return [backward_on(copy.deepcopy(case.model).to(device, dtype), x.to(device, dtype),
                        y.to(device, dtype)) for x, y in case.shards]


def full_batch_grads(case: SyncCase) -> list[torch.Tensor | None]:
    """The gradient of the mean loss over every rank's samples at once."""
    x = torch.cat([x for x, _ in case.shards])
    y = torch.cat([y for _, y in case.shards])
    model = backward_on(copy.deepcopy(case.model), x, y)
    return [p.grad for p in model.parameters()]


# ------------------------------------------------------------------ properties (threads)

@pytest.mark.weight(3)
@settings(max_examples=30)
@given(sync_cases())
def test_returned_gradients_equal_the_full_batch_gradient(impl, case):
    run = impl.run_ranks("average_gradients", [(m, case.world) for m in rank_models(case)])
    expected = full_batch_grads(case)
    for rank, got in enumerate(run.results):
        check_grads(got, expected, f"what rank {rank} returned ({case.note()})")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(sync_cases())
def test_model_gradients_are_averaged_in_place(impl, case):
    models = rank_models(case)
    impl.run_ranks("average_gradients", [(m, case.world) for m in models])
    expected = full_batch_grads(case)
    for rank, model in enumerate(models):
        check_grads(grads_of(model), expected,
                          f"rank {rank}'s own p.grad after the call ({case.note()}; the model's "
                          ".grad must hold the average, not just the returned list)")


@settings(max_examples=10)
@given(sync_cases())
def test_parameters_unchanged(impl, case):
    """The weights stay as they were, and the same run returns the full-batch gradients."""
    models = rank_models(case)
    run = impl.run_ranks("average_gradients", [(m, case.world) for m in models])
    assert_arguments_unchanged(impl, what="the models' weights after the call (average the "
                                          "gradients only; no step, no change to the weights)")
    for rank, model in enumerate(models):
        for (name, got), original in zip(model.named_parameters(), case.model.parameters()):
            assert_same(got.detach(), original.detach(),
                        what=f"rank {rank}'s parameter {name} after the call (average the "
                             "gradients only; no step, no change to the weights)")
    expected = full_batch_grads(case)
    for rank, got in enumerate(run.results):
        assert_ordinary_answer(got, expected, compare=check_grads, what=f"what rank {rank} returned ({case.note()})")


@settings(max_examples=15)
@given(sync_cases(frozen=st.lists(st.sampled_from(PARAM_NAMES), min_size=1, max_size=3, unique=True)))
def test_frozen_parameters_keep_no_gradient(impl, case):
    models = rank_models(case)
    run = impl.run_ranks("average_gradients", [(m, case.world) for m in models])
    expected = full_batch_grads(case)
    for rank, (model, returned) in enumerate(zip(models, run.results)):
        for i, (name, param) in enumerate(model.named_parameters()):
            if name in case.frozen:
                assert param.grad is None, (
                    f"rank {rank}: frozen parameter {name} (requires_grad=False) has a .grad "
                    "after the call; a parameter without a gradient must keep None")
        check_grads(returned, expected, f"what rank {rank} returned ({case.note()})")


# ------------------------------------------------------------------ real gloo processes

@pytest.mark.distributed
@pytest.mark.weight(2)
def test_gloo_processes_equal_the_full_batch_gradient(impl):
    gen = torch.Generator().manual_seed(2)
    with torch.random.fork_rng(devices=[]):
        manual_seed(2)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    model[0].bias.requires_grad_(False)
    shards = [(torch.randn(2, 3, dtype=torch.float64, generator=gen),
               torch.randn(2, 2, dtype=torch.float64, generator=gen)) for _ in range(2)]
    case = SyncCase(model, shards, ("0.bias",))
    results = impl.run_gloo("average_gradients", [(m, case.world) for m in rank_models(case)])
    expected = full_batch_grads(case)
    for rank, got in enumerate(results):
        check_grads(got, expected, f"what gloo rank {rank} of {case.world} returned "
                                         f"({case.note()}; all_reduce=torch.distributed.all_reduce)")


# ------------------------------------------------------------------ GPU

def check_float32_on_device(impl, case: SyncCase, device: str) -> None:
    """float32 models on ``device`` against the float64 CPU full-batch gradient: the
    averaged gradients stay on the device."""
    rounded = SyncCase(copy.deepcopy(case.model).float().double(),
                       [(x.float().double(), y.float().double()) for x, y in case.shards],
                       case.frozen)
    models = rank_models(rounded, device, torch.float32)
    run = impl.run_ranks("average_gradients", [(m, case.world) for m in models])
    expected = full_batch_grads(rounded)
    for rank, got in enumerate(run.results):
        assert isinstance(got, list) and len(got) == len(expected), (
            f"rank {rank} returned {type(got).__name__}; expected a list of {len(expected)} gradients")
        for name, g, e in zip(PARAM_NAMES, got, expected):
            if e is None:
                assert g is None, f"rank {rank}: frozen parameter {name} got a gradient on {device}"
                continue
            assert isinstance(g, torch.Tensor) and g.device.type == device, (
                f"rank {rank}: the gradient of {name} is on {getattr(g, 'device', None)}, "
                f"expected {device} (where the model is)")
            assert_same(g.cpu().double(), e, what=f"rank {rank}: float32 gradient of {name} on "
                        f"{device} (vs the float64 full-batch gradient)", rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@settings(max_examples=15)
@given(sync_cases())
def test_float32_on_gpu_stays_there_and_matches(impl, case):
    check_float32_on_device(impl, case, "cuda")
