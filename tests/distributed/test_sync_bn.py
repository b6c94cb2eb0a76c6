"""Sync batch norm: every rank's (mean, var, count) gathered by one all_reduce and merged by
the parallel formula, equal to F.batch_norm on the concatenation, accurate in float32 far
from 0."""

import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_ordinary_answer, harder_than
from tests.strategies import float_tensors, layouts, sampled, shapes

_BY_HAND = ("compute mean and var with sync_batch_stats and normalise by hand: "
            "(x - mean) / sqrt(var + eps) * weight + bias, with the (C,) tensors "
            "reshaped to (1, C, 1, ...) so they broadcast along the channel dim")
_MERGE_BY_HAND = ("gather every rank's (mean, var, count) with one all_reduce and merge them "
                  "by hand: mean = sum(n_r * m_r) / n, var = sum(n_r * (v_r + (m_r - mean) ** 2)) / n")

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.batch_norm": _BY_HAND,
    "torch.batch_norm": _BY_HAND,
    "torch.native_batch_norm": _BY_HAND,
    "nn.BatchNorm1d": _BY_HAND,
    "nn.BatchNorm2d": _BY_HAND,
    "nn.BatchNorm3d": _BY_HAND,
    "nn.SyncBatchNorm": _BY_HAND,
    # the kernels nn.SyncBatchNorm is built from (the statistics, their merge, the normalisation)
    "torch.batch_norm_stats": _MERGE_BY_HAND,
    "torch.batch_norm_update_stats": _MERGE_BY_HAND,
    "torch.batch_norm_gather_stats": _MERGE_BY_HAND,
    "torch.batch_norm_gather_stats_with_counts": _MERGE_BY_HAND,
    "torch.batch_norm_elemt": _BY_HAND,
})

EPSILONS = [1e-5, 1e-3, 0.1, 1.0]
# (dtype, offset): offsets far larger than the spread ([-1, 1]) of the batches. There
# sum_sq / count - mean ** 2 loses ~offset ** 2 * eps to cancellation (0.1 at 1e3 and 10 at 1e4
# in float32; 1e-2 at 1e7 in float64, so summing squares in float64 does not save float32
# either), while the parallel merge loses ~|offset| * eps (each rank's mean is known to an ulp
# of the offset, and the spread of the rank means is squared from it). The brief's float32
# cases first; the float64 ones catch the one-pass formula computed in a wider dtype.
FAR_CASES = ((torch.float32, 1e3), (torch.float32, -3e3), (torch.float32, 1e4),
             (torch.float64, 1e7), (torch.float64, -3e7), (torch.float64, 1e8))
NEAR_TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: {}}


def _far_tolerance(dtype: torch.dtype, offset: float) -> dict[str, float]:
    """A variance around ``offset``: a few ulps of the offset (times the spread), or 1e-3 of it."""
    return dict(rtol=1e-3, atol=8 * abs(offset) * torch.finfo(dtype).eps)


# ------------------------------------------------------------------ strategies

@st.composite
def rank_batches(draw, min_count: int = 1, max_world: int = 4, low: float = -10.0,
                 high: float = 10.0) -> list[torch.Tensor]:
    """One float64 ``(N_r, C, *spatial)`` batch per rank (1 to ``max_world`` ranks), values in
    [low, high].

    Batch sizes may differ between ranks and may be 0; the whole batch has at least
    ``min_count`` elements per channel.
    """
    world = draw(st.integers(1, max_world), label="ranks")
    channels = draw(st.integers(1, 3), label="channels")
    spatial = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="spatial shape")
    per_sample = math.prod(spatial)
    sizes = draw(st.lists(st.integers(0, 4), min_size=world, max_size=world).filter(
        lambda s: sum(s) * per_sample >= min_count), label="batch size per rank")
    return [draw(float_tensors((n, channels, *spatial), low=low, high=high), label=f"rank {r} batch")
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
    """float64 mean and biased variance of the concatenation, in the batches' dtype."""
    rows = _channel_rows(torch.cat(batches))
    dtype = batches[0].dtype
    return rows.mean(dim=1).to(dtype), rows.var(dim=1, unbiased=False).to(dtype)


def _ranked(batches: list[torch.Tensor], *extra) -> list[tuple]:
    """Each rank's arguments: a copy of its batch, its rank and the world size (and ``extra``)."""
    return [(x.clone(), rank, len(batches), *extra) for rank, x in enumerate(batches)]


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


def _check_stats(results, batches: list[torch.Tensor], **tolerance) -> None:
    expected = _concatenation_stats(batches)
    for rank, got in enumerate(results):
        assert_same(got, expected, what=f"rank {rank} of {_world_note(batches)}: (mean, var)", **tolerance)


def _expected_norm(batches, weight, bias, eps) -> tuple[torch.Tensor, ...]:
    with _one_intra_op_thread():
        whole = F.batch_norm(torch.cat(batches), None, None, weight, bias, training=True, eps=eps)
    return whole.split([x.shape[0] for x in batches])


def _check_norm(results, batches, weight, bias, eps) -> None:
    for rank, (got, expected) in enumerate(zip(results, _expected_norm(batches, weight, bias, eps))):
        assert_same(got, expected, what=f"output of rank {rank} of {_world_note(batches)} (eps={eps})")


def on_ordinary_batches(impl, batches: list[torch.Tensor]):
    """Rides along with an error check: sync_batch_stats on ordinary rank batches against the
    mean and biased variance of their concatenation."""
    def compare(run, _, what):
        _check_stats(run.results, batches)

    return anchored(lambda: impl.run_ranks("sync_batch_stats", _ranked(batches)),
                    lambda: None, compare=compare,
                    what="sync_batch_stats on ordinary batches (checked beside the error case)")


# ------------------------------------------------------------------ batch_stats

def _expected_batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """float64 (mean, biased var, count) of x's channels, zeros where x is empty."""
    rows = _channel_rows(x)
    count = rows.shape[1]
    if count == 0:
        zeros = torch.zeros(rows.shape[0], dtype=torch.float64)
        return zeros, zeros, torch.tensor(0.0, dtype=torch.float64)
    return rows.mean(dim=1), rows.var(dim=1, unbiased=False), torch.tensor(float(count), dtype=torch.float64)


@pytest.mark.weight(2)
@settings(max_examples=45)
@example((), 3, 2, torch.float64, None)  # the spec's example: x = [[1, 2], [3, 4], [5, 6]]
@given(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.integers(0, 4),
       st.integers(1, 4), st.sampled_from([torch.float64, torch.float32]), st.data())
def test_batch_stats_are_per_channel_mean_variance_and_count(impl, spatial, n, channels, dtype, data):
    """x in any memory layout: channels-last (permuted), or a strided view of a NaN-filled
    storage; an empty x gives zeros and a count of 0."""
    if data is None:
        x, lay = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=dtype), (lambda t: t.clone())
    else:
        x = data.draw(float_tensors((n, channels, *spatial), dtype=dtype), label="x")
        lay = data.draw(layouts(x.dim(), label="x"))
    expected = tuple(t.to(dtype) for t in _expected_batch_stats(x))
    tol = {} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-4}
    got = impl.batch_stats(lay(x))
    assert_same(got, expected, what=f"(mean, var, count) of x of shape {tuple(x.shape)} in the "
                                    "memory layout drawn", **tol)


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), st.integers(1, 4),
       st.integers(1, 3), st.sampled_from([torch.float16, torch.bfloat16]), st.data())
def test_batch_stats_keep_float16_and_bfloat16(impl, spatial, n, channels, dtype, data):
    """float16 / bfloat16 batches on the CPU: the three statistics in x's dtype, close to
    the float64 statistics of the same values (within a few roundings of their size)."""
    x = data.draw(float_tensors((n, channels, *spatial), dtype=torch.float64, low=-4, high=4),
                  label="x").to(dtype)
    expected = _expected_batch_stats(x)
    got = impl.batch_stats(x.clone())
    assert isinstance(got, tuple) and len(got) == 3, (
        f"batch_stats returned {type(got).__name__}; expected a tuple (mean, var, count)")
    eps = torch.finfo(dtype).eps
    biggest = float(x.double().abs().max())
    for name, g, e, size in zip(("mean", "var", "count"), got, expected,
                                (biggest, biggest * biggest, 1.0)):
        assert isinstance(g, torch.Tensor) and g.dtype == dtype, (
            f"{name} is {getattr(g, 'dtype', type(g).__name__)}; expected {dtype}, x's dtype")
        assert_same(g.double(), e, rtol=0, atol=8 * eps * size + 1e-12,
                    what=f"{name} of a {dtype} x of shape {tuple(x.shape)} (vs float64 statistics)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@example((), 4, 1, (torch.float32, 1e4), None)  # the module docstring's 10001, 10002, 10003, 10004
@given(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), st.integers(1, 4),
       st.integers(1, 3), sampled(FAR_CASES), st.data())
def test_batch_stats_stay_accurate_far_from_zero(impl, spatial, n, channels, far_case, data):
    """float32 (and float64) batches whose mean (about the offset) dwarfs their spread
    ([-1, 1]): the mean of squared deviations keeps the variance, (x * x).mean() - mean ** 2
    loses it to cancellation. Anchored on the same values around 0."""
    dtype, offset = far_case
    if data is None:
        near = torch.tensor([[1.0], [2.0], [3.0], [4.0]], dtype=torch.float64) - 2.5
    else:
        near = data.draw(float_tensors((n, channels, *spatial), low=-1, high=1), label="x - offset")
    far = (near + offset).to(dtype)
    near = near.to(dtype)
    tolerance = NEAR_TOLERANCE[dtype]
    with harder_than(lambda: impl.batch_stats(near.clone()),
                     lambda: tuple(t.to(dtype) for t in _expected_batch_stats(near)),
                     what=f"(mean, var, count) of the same {dtype} x around 0, shape {tuple(near.shape)}",
                     **tolerance):
        mean, var, count = _expected_batch_stats(far)
        got = impl.batch_stats(far.clone())
        assert isinstance(got, tuple) and len(got) == 3, (
            f"batch_stats returned {type(got).__name__}; expected a tuple (mean, var, count)")
        assert_same(got[0], mean.to(dtype), what=f"the mean of a {dtype} x around {offset:g}", **tolerance)
        assert_same(got[1], var.to(dtype),
                    what=f"the variance of a {dtype} x around {offset:g} (a spread of a few units), right for "
                         "the same x around 0: subtract the mean, then square (E[x^2] - E[x]^2 cancels)",
                    **_far_tolerance(dtype, offset))


def _draw_affine(data, channels: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The per-channel (weight, bias) of a batch norm."""
    weight = data.draw(float_tensors((channels,), low=-3, high=3), label="weight")
    bias = data.draw(float_tensors((channels,), low=-3, high=3), label="bias")
    return weight, bias


# ------------------------------------------------------------------ sync_batch_stats

@pytest.mark.weight(3)
@settings(max_examples=45)
# The spec's example: [1, 3] on rank 0, [8] on rank 1: mean 4 (not 5, the mean of the means).
@example([torch.tensor([[1.0], [3.0]], dtype=torch.float64), torch.tensor([[8.0]], dtype=torch.float64)])
@given(rank_batches())
def test_stats_equal_those_of_the_concatenation(impl, batches):
    _check_stats(impl.run_ranks("sync_batch_stats", _ranked(batches)).results, batches)


@pytest.mark.weight(3)
@settings(max_examples=25)
@given(rank_batches(min_count=2, max_world=3, low=-1.0, high=1.0), sampled(FAR_CASES))
def test_stats_stay_accurate_far_from_zero(impl, batches, far_case):
    """float32 (and float64) rank batches whose mean (about the offset) dwarfs their spread
    ([-1, 1]): the parallel merge of each rank's (mean, var, count) keeps the variance;
    summed sums of squares, sum_sq / count - mean ** 2, lose it to cancellation. Anchored on
    the same batches around 0."""
    dtype, offset = far_case
    near = [x.to(dtype) for x in batches]
    far = [(x + offset).to(dtype) for x in batches]
    tolerance = NEAR_TOLERANCE[dtype]
    with harder_than(lambda: impl.run_ranks("sync_batch_stats", _ranked(near)).results,
                     lambda: [_concatenation_stats(near)] * len(near),
                     what=f"sync_batch_stats of the same {dtype} batches around 0 ({_world_note(near)})",
                     **tolerance):
        results = impl.run_ranks("sync_batch_stats", _ranked(far)).results
        mean, var = _concatenation_stats(far)
        for rank, got in enumerate(results):
            assert isinstance(got, tuple) and len(got) == 2, (
                f"sync_batch_stats returned {type(got).__name__}; expected a tuple (mean, var)")
            assert_same(got[0], mean, what=f"the mean on rank {rank} of {dtype} batches around "
                                           f"{offset:g} ({_world_note(far)})", **tolerance)
            assert_same(got[1], var,
                        what=f"the variance on rank {rank} of {dtype} batches around {offset:g} "
                             f"(a spread of a few units, {_world_note(far)}), right for the same batches around 0: "
                             "merge each rank's (mean, var, count); summed sums of squares cancel",
                        **_far_tolerance(dtype, offset))


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(rank_batches(min_count=2), st.sampled_from(EPSILONS), st.data())
def test_one_all_reduce_call_per_rank(impl, batches, eps, data):
    """The count, and in the same runs the results against the oracle."""
    weight, bias = _draw_affine(data, channels=batches[0].shape[1])
    for name, extra in (("sync_batch_stats", ()), ("sync_batch_norm", (weight, bias))):
        args = [(x.clone(), *extra, rank, len(batches), *((eps,) if extra else ()))
                for rank, x in enumerate(batches)]
        run = impl.run_ranks(name, args)
        for rank, calls in enumerate(run.calls):
            assert calls == 1, (
                f"{name}() on rank {rank} of {_world_note(batches)} called all_reduce {calls} "
                "time(s); it must call it exactly once: write mean, var and count into this "
                "rank's row of one (world_size, 2C + 1) zero tensor and reduce that")
        if name == "sync_batch_stats":
            assert_ordinary_answer(run.results, None, compare=lambda got, _, what: _check_stats(got, batches))
        else:
            assert_ordinary_answer(run.results, None,
                                   compare=lambda got, _, what: _check_norm(got, batches, weight, bias, eps))


# Values whose squares and sums do not round evenly: E[x^2] - E[x]^2 of a channel holding
# one of them over and over comes out a hair below 0 about one time in five.
CONSTANTS = tuple(sorted({k / 10 for k in range(-40, 41)} | {k / 3 for k in range(-9, 10)}))


@st.composite
def constant_channel_batches(draw, max_world: int = 3) -> list[torch.Tensor]:
    """Rank batches (N_r, C) with 4 to 8 channels, each channel one value on every rank
    and every row (at least two elements per channel in all)."""
    world = draw(st.integers(1, max_world), label="ranks")
    channels = draw(st.integers(4, 8), label="channels")
    values = torch.tensor([draw(sampled(CONSTANTS), label=f"channel {c}'s value")
                           for c in range(channels)], dtype=torch.float64)
    sizes = draw(st.lists(st.integers(0, 7), min_size=world, max_size=world).filter(
        lambda s: sum(s) >= 2), label="batch size per rank")
    return [values.expand(n, channels).clone() for n in sizes]


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(constant_channel_batches(), rank_batches(max_world=3))
def test_variance_is_never_negative(impl, batches, ordinary):
    """Channels that hold one value each: the variance is 0, and sum_sq / count - mean ** 2
    rounds a hair below it for some of them (a negative variance under a small eps gives
    sqrt of a negative number); every term of the parallel merge is a variance or a square."""
    with on_ordinary_batches(impl, ordinary):
        results = impl.run_ranks("sync_batch_stats", _ranked(batches)).results
        _check_stats(results, batches)
        for rank, (_, var) in enumerate(results):
            below = [float(v) for v in var if float(v) < 0]
            assert not below, (
                f"rank {rank} of {_world_note(batches)}, every channel constant: var has "
                f"{below} below 0; merge each rank's (mean, var, count) instead of "
                "sum_sq / count - mean ** 2")


@settings(max_examples=25)
@given(empty_rank_batches(), rank_batches(max_world=3))
def test_no_element_anywhere_raises_value_error(impl, batches, ordinary):
    with on_ordinary_batches(impl, ordinary):
        with expect_raises(ValueError, when=f"no rank holds any element ({_world_note(batches)}, "
                                            f"shape {tuple(batches[0].shape)} on rank 0)"):
            impl.run_ranks("sync_batch_stats", _ranked(batches))


# ------------------------------------------------------------------ sync_batch_norm

@pytest.mark.weight(3)
@settings(max_examples=45)
@given(rank_batches(min_count=2), st.sampled_from(EPSILONS), st.data())
def test_batch_norm_equals_f_batch_norm_on_the_concatenation(impl, batches, eps, data):
    """Every rank's x, and weight and bias, in a memory layout of their own (channels-last,
    strided views of a NaN-filled storage)."""
    weight, bias = _draw_affine(data, channels=batches[0].shape[1])
    lay_x = [data.draw(layouts(x.dim(), label=f"rank {r} x"), label=f"layout of rank {r}'s x")
             for r, x in enumerate(batches)]
    lay_w, lay_b = (data.draw(layouts(1, label=name), label=f"layout of {name}")
                    for name in ("weight", "bias"))
    run = impl.run_ranks("sync_batch_norm",
                         [(lay(x), lay_w(weight), lay_b(bias), rank, len(batches), eps)
                          for rank, (lay, x) in enumerate(zip(lay_x, batches))])
    _check_norm(run.results, batches, weight, bias, eps)


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
    results = impl.run_gloo("sync_batch_norm", [(x, weight, bias, rank, world) for rank, x in enumerate(batches)])
    with _one_intra_op_thread():
        whole = F.batch_norm(torch.cat(batches), None, None, weight, bias, training=True, eps=1e-5)
    expected = whole.split(sizes)
    for rank, got in enumerate(results):
        assert_same(got, expected[rank],
                    what=f"output of gloo rank {rank} of {world} (batch sizes {sizes}, "
                         "default all_reduce=torch.distributed.all_reduce)")
    stats = impl.run_gloo("sync_batch_stats", [(x, rank, world) for rank, x in enumerate(batches)])
    mean, var = _concatenation_stats(batches)
    for rank, got in enumerate(stats):
        assert_same(got, (mean, var),
                    what=f"sync_batch_stats (mean, var) on gloo rank {rank} of {world} (batch sizes "
                         f"{sizes}, default all_reduce=torch.distributed.all_reduce)")
