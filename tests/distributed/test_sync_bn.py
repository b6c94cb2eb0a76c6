"""Sync batch norm: global per-channel statistics from one packed all_reduce, equal to F.batch_norm."""

import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.contract.expect import assert_same, expect_raises
from tests.strategies import float_tensors, shapes

_BY_HAND = ("compute mean and var with sync_batch_stats and normalise by hand: "
            "(x - mean) / sqrt(var + eps) * weight + bias, with the (C,) tensors "
            "reshaped to (1, C, 1, ...) so they broadcast along the channel dim")

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.batch_norm": _BY_HAND,
    "torch.batch_norm": _BY_HAND,
    "nn.BatchNorm1d": _BY_HAND,
    "nn.BatchNorm2d": _BY_HAND,
    "nn.BatchNorm3d": _BY_HAND,
    "nn.SyncBatchNorm": _BY_HAND,
})

EPSILONS = [1e-5, 1e-3, 0.1, 1.0]


# ------------------------------------------------------------------ strategies

@st.composite
def rank_batches(draw, min_count: int = 1, max_world: int = 4) -> list[torch.Tensor]:
    """One float64 ``(N_r, C, *spatial)`` batch per rank (1 to ``max_world`` ranks).

    Batch sizes may differ between ranks and may be 0; the whole batch has at least
    ``min_count`` elements per channel.
    """
    world = draw(st.integers(1, max_world), label="ranks")
    channels = draw(st.integers(1, 3), label="channels")
    spatial = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="spatial shape")
    per_sample = math.prod(spatial)
    sizes = draw(st.lists(st.integers(0, 4), min_size=world, max_size=world).filter(
        lambda s: sum(s) * per_sample >= min_count), label="batch size per rank")
    return [draw(float_tensors((n, channels, *spatial)), label=f"rank {r} batch")
            for r, n in enumerate(sizes)]


@st.composite
def empty_rank_batches(draw, max_world: int = 4) -> list[torch.Tensor]:
    """Batches of 1 to ``max_world`` ranks with no element at all: every N_r == 0,
    or a spatial size 0."""
    world = draw(st.integers(1, max_world), label="ranks")
    channels = draw(st.integers(1, 3), label="channels")
    spatial = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), label="spatial shape")
    most = 4 if math.prod(spatial) == 0 else 0
    sizes = draw(st.lists(st.integers(0, most), min_size=world, max_size=world),
                 label="batch size per rank")
    return [torch.zeros(n, channels, *spatial, dtype=torch.float64) for n in sizes]


def _channel_rows(x: torch.Tensor) -> torch.Tensor:
    """``x`` as a ``(C, elements per channel)`` float64 matrix (works for empty x too)."""
    channels = x.shape[1]
    return x.double().movedim(1, 0).reshape(channels, x.numel() // channels)


def _concatenation_stats(batches: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    rows = _channel_rows(torch.cat(batches))
    return rows.mean(dim=1), rows.var(dim=1, unbiased=False)


@contextmanager
def _one_intra_op_thread() -> Iterator[None]:
    """Run the oracle on one intra-op thread.

    Right after the rank threads, an OpenMP region in the grader's thread (F.batch_norm
    opens one) measured 10-20 ms on a busy 2-core runner; on one thread it takes 0.05 ms.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _world_note(batches: list[torch.Tensor]) -> str:
    return f"{len(batches)} rank(s) with batch sizes {[b.shape[0] for b in batches]}"


# ------------------------------------------------------------------ batch_stats

@pytest.mark.weight(2)
@settings(max_examples=60)
@given(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.integers(0, 4),
       st.integers(1, 4), st.sampled_from([torch.float64, torch.float32]), st.data())
def test_batch_stats_are_per_channel_sums_and_count(impl, spatial, n, channels, dtype, data):
    x = data.draw(float_tensors((n, channels, *spatial), dtype=dtype), label="x")
    rows = _channel_rows(x)
    expected = (rows.sum(dim=1).to(dtype), (rows * rows).sum(dim=1).to(dtype),
                torch.tensor(float(rows.shape[1]), dtype=dtype))
    tol = {} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-4}
    got = impl.batch_stats(x.clone())
    assert_same(got, expected, what="(sum, sum_sq, count)", **tol)


def _draw_affine(data, channels: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The per-channel (weight, bias) of a batch norm."""
    weight = data.draw(float_tensors((channels,), low=-3, high=3), label="weight")
    bias = data.draw(float_tensors((channels,), low=-3, high=3), label="bias")
    return weight, bias


# ------------------------------------------------------------------ sync_batch_stats

@pytest.mark.weight(3)
@settings(max_examples=60)
@given(rank_batches())
def test_stats_equal_those_of_the_concatenation(impl, batches):
    run = impl.run_ranks("sync_batch_stats", [(x.clone(),) for x in batches])
    mean, var = _concatenation_stats(batches)
    for rank, got in enumerate(run.results):
        assert_same(got, (mean, var), what=f"rank {rank} of {_world_note(batches)}: (mean, var)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(rank_batches(min_count=2), st.sampled_from(EPSILONS), st.data())
def test_one_all_reduce_call_per_rank(impl, batches, eps, data):
    weight, bias = _draw_affine(data, channels=batches[0].shape[1])
    for name, extra in (("sync_batch_stats", ()), ("sync_batch_norm", (weight, bias, eps))):
        run = impl.run_ranks(name, [(x.clone(), *extra) for x in batches])
        for rank, calls in enumerate(run.calls):
            assert calls == 1, (
                f"{name}() on rank {rank} of {_world_note(batches)} called all_reduce {calls} "
                "time(s); it must call it exactly once: pack sum, sum_sq and count into one "
                "tensor and reduce that")


@settings(max_examples=25)
@given(empty_rank_batches())
def test_no_element_anywhere_raises_value_error(impl, batches):
    with expect_raises(ValueError, when=f"no rank holds any element ({_world_note(batches)}, "
                                        f"shape {tuple(batches[0].shape)} on rank 0)"):
        impl.run_ranks("sync_batch_stats", [(x.clone(),) for x in batches])


# ------------------------------------------------------------------ sync_batch_norm

@pytest.mark.weight(3)
@settings(max_examples=60)
@given(rank_batches(min_count=2), st.sampled_from(EPSILONS), st.data())
def test_batch_norm_equals_f_batch_norm_on_the_concatenation(impl, batches, eps, data):
    weight, bias = _draw_affine(data, channels=batches[0].shape[1])
    run = impl.run_ranks("sync_batch_norm",
                         [(x.clone(), weight.clone(), bias.clone(), eps) for x in batches])
    with _one_intra_op_thread():
        whole = F.batch_norm(torch.cat(batches), None, None, weight, bias, training=True, eps=eps)
    expected = whole.split([x.shape[0] for x in batches])
    for rank, got in enumerate(run.results):
        assert_same(got, expected[rank],
                    what=f"output of rank {rank} of {_world_note(batches)} (eps={eps})")


# ------------------------------------------------------------------ real gloo processes

GLOO_CASES = {2: ([3, 1], (2,)), 3: ([2, 0, 5], (2, 2))}


@pytest.mark.distributed
@pytest.mark.weight(2)
@pytest.mark.parametrize("world", sorted(GLOO_CASES))
def test_gloo_processes_agree_with_f_batch_norm(impl, world):
    sizes, spatial = GLOO_CASES[world]
    gen = torch.Generator().manual_seed(world)
    channels = 3
    batches = [torch.randn(n, channels, *spatial, dtype=torch.float64, generator=gen) * 3 + 1
               for n in sizes]
    weight = torch.rand(channels, dtype=torch.float64, generator=gen) + 0.5
    bias = torch.randn(channels, dtype=torch.float64, generator=gen)
    results = impl.run_gloo("sync_batch_norm", [(x, weight, bias) for x in batches])
    with _one_intra_op_thread():
        whole = F.batch_norm(torch.cat(batches), None, None, weight, bias, training=True, eps=1e-5)
    expected = whole.split(sizes)
    for rank, got in enumerate(results):
        assert_same(got, expected[rank],
                    what=f"output of gloo rank {rank} of {world} (batch sizes {sizes}, "
                         "default all_reduce=torch.distributed.all_reduce)")
