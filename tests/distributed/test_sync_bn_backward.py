"""Batch norm's backward by hand and synchronised with one all_reduce, against
torch.autograd.grad through F.batch_norm(training=True) on the (concatenated) batch."""

import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same
from tests.properties import assert_ordinary_answer
from tests.strategies import float_tensors, layouts, sampled, shapes

_BY_HAND = ("write the formula: grad_input = weight * invstd * (grad_output - mean(grad_output) "
            "- x_hat * mean(grad_output * x_hat)), the means over each channel's elements; "
            "grad_weight = sum(grad_output * x_hat), grad_bias = sum(grad_output)")

pytestmark = pytest.mark.exercise(points=15, forbid={
    # autograd: the gradient this drill derives by hand
    "torch.autograd.grad": _BY_HAND,
    "torch.autograd.backward": _BY_HAND,
    "torch.Tensor.backward": _BY_HAND,
    "torch.autograd.functional": _BY_HAND,
    "torch.autograd.graph._engine_run_backward": _BY_HAND,  # what grad() and backward() call
    "torch._C._ImperativeEngine.run_backward": _BY_HAND,  # the engine itself
    "torch.func": _BY_HAND,
    # batch norm, whose autograd node (y.grad_fn) is its backward, and its kernels
    "F.batch_norm": _BY_HAND,
    "torch.batch_norm": _BY_HAND,
    "torch.native_batch_norm": _BY_HAND,
    "nn.BatchNorm1d": _BY_HAND,
    "nn.BatchNorm2d": _BY_HAND,
    "nn.BatchNorm3d": _BY_HAND,
    "nn.SyncBatchNorm": _BY_HAND,
    "torch.batch_norm_stats": _BY_HAND,
    "torch.batch_norm_elemt": _BY_HAND,
    "torch.batch_norm_update_stats": _BY_HAND,
    "torch.batch_norm_gather_stats_with_counts": _BY_HAND,
    "torch.batch_norm_backward_reduce": _BY_HAND,
    "torch.batch_norm_backward_elemt": _BY_HAND,
    # the normalisations' backward kernels, reached through torch.ops (red team: 15/15)
    **{f"torch.ops.aten.{op}": _BY_HAND for op in (
        "native_batch_norm_backward", "batch_norm_backward", "_batch_norm_impl_index_backward",
        "cudnn_batch_norm_backward", "miopen_batch_norm_backward", "native_layer_norm_backward",
        "native_group_norm_backward")},
    # the capability: every normalisation layer normalises a channel the same way (instance
    # norm of x.transpose(0, 1)[None], group norm with one group per channel), and its node
    # differentiates it
    "F.instance_norm": _BY_HAND,
    "torch.instance_norm": _BY_HAND,
    "nn.InstanceNorm1d": _BY_HAND,
    "nn.InstanceNorm2d": _BY_HAND,
    "nn.InstanceNorm3d": _BY_HAND,
    "F.group_norm": _BY_HAND,
    "torch.group_norm": _BY_HAND,
    "nn.GroupNorm": _BY_HAND,
    "F.layer_norm": _BY_HAND,
    "torch.layer_norm": _BY_HAND,
    "nn.LayerNorm": _BY_HAND,
})

DEFAULT_EPS = 1e-5
# the default most often: a call leaves it out when the case says so
EPSILONS = st.one_of(st.just(DEFAULT_EPS), sampled((1e-3, 0.1, 1.0)))


@contextmanager
def _one_intra_op_thread() -> Iterator[None]:
    """Run the oracle on one intra-op thread (an OpenMP region right after the rank threads
    measured 10-20 ms on a busy 2-core runner; on one thread it takes 0.05 ms)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def autograd_gradients(grad_output: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                       eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The oracle: torch.autograd.grad of (y * grad_output).sum() through
    F.batch_norm(training=True), with respect to x, weight and bias."""
    leaf_x = x.detach().clone().requires_grad_()
    leaf_w = weight.detach().clone().requires_grad_()
    leaf_b = torch.zeros_like(leaf_w, requires_grad=True)
    with _one_intra_op_thread():
        y = F.batch_norm(leaf_x, None, None, leaf_w, leaf_b, training=True, eps=eps)
        return torch.autograd.grad(y, (leaf_x, leaf_w, leaf_b), grad_output)


def _statistics(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The (mean, invstd) a forward of x saves (biased variance)."""
    dims = [d for d in range(x.dim()) if d != 1]
    mean = x.mean(dim=dims)
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    var = ((x - mean.reshape(shape)) ** 2).mean(dim=dims)
    return mean, 1 / torch.sqrt(var + eps)


@st.composite
def batches(draw, min_sample: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad_output, x, weight): x of shape (N, C, *spatial), at least 2 elements per channel."""
    channels = draw(st.integers(1, 3), label="channels")
    spatial = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="spatial shape")
    least = max(min_sample, math.ceil(2 / math.prod(spatial)))
    n = draw(st.integers(least, 5), label="N")
    x = draw(float_tensors((n, channels, *spatial)), label="x")
    grad_output = draw(float_tensors((n, channels, *spatial), low=-3, high=3), label="grad_output")
    weight = draw(float_tensors((channels,), low=-3, high=3), label="weight")
    return grad_output, x, weight


SPEC_X = torch.tensor([[1.0], [2.0], [3.0], [6.0]])
SPEC_DY = torch.tensor([[1.0], [0.0], [0.0], [0.0]])


# ------------------------------------------------------------------ batch_norm_backward

@pytest.mark.weight(3)
@settings(max_examples=60)
@example((SPEC_DY, SPEC_X, torch.ones(1)), DEFAULT_EPS, False, None)  # the spec's example
@given(batches(), EPSILONS, st.booleans(), st.data())
def test_batch_norm_backward_matches_autograd(impl, case, eps, spelled, data):
    """x and grad_output in memory layouts of their own (channels-last, strided views of a
    NaN-filled storage); eps left out when it is the default and the case says so."""
    grad_output, x, weight = case
    expected = autograd_gradients(grad_output, x, weight, eps)
    if data is None:
        lay_dy = lay_x = lambda t: t.clone()
    else:
        lay_dy = data.draw(layouts(x.dim(), label="grad_output"), label="layout of grad_output")
        lay_x = data.draw(layouts(x.dim(), label="x"), label="layout of x")
    args = (lay_dy(grad_output), lay_x(x), weight.clone())
    left_out = eps == DEFAULT_EPS and not spelled
    got = impl.batch_norm_backward(*args) if left_out else impl.batch_norm_backward(*args, eps)
    assert_same(got, expected,
                what=f"(grad_input, grad_weight, grad_bias) for x of shape {tuple(x.shape)}, eps={eps}"
                     + (" (eps left out: the default)" if left_out else ""))


# ------------------------------------------------------------------ sync_batch_norm_backward

@st.composite
def rank_slices(draw, max_world: int = 4):
    """A batch (grad_output, x, weight) as ``batches`` draws it, cut into 1 to ``max_world``
    rank slices along dim 0 (a slice may hold no sample), and the forward's eps."""
    grad_output, x, weight = draw(batches())
    world = draw(st.integers(1, max_world), label="ranks")
    cuts = sorted(draw(st.lists(st.integers(0, x.shape[0]), min_size=world - 1, max_size=world - 1),
                       label="cut points"))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, x.shape[0]])]
    eps = draw(EPSILONS, label="eps")
    return grad_output, x, weight, sizes, eps


def _world_note(sizes: list[int]) -> str:
    return f"{len(sizes)} rank(s) with batch sizes {sizes}"


def _rank_args(grad_output, x, weight, sizes, eps) -> list[tuple]:
    mean, invstd = _statistics(x, eps)
    return [(dy.clone(), xs.clone(), weight.clone(), mean.clone(), invstd.clone())
            for dy, xs in zip(grad_output.split(sizes), x.split(sizes))]


def _check_ranks(results, grad_output, x, weight, sizes, eps) -> None:
    grad_input, grad_weight, grad_bias = autograd_gradients(grad_output, x, weight, eps)
    for rank, (got, rows) in enumerate(zip(results, grad_input.split(sizes))):
        assert_same(got, (rows, grad_weight, grad_bias),
                    what=f"(grad_input, grad_weight, grad_bias) on rank {rank} of {_world_note(sizes)}, "
                         f"eps={eps}")


@pytest.mark.weight(4)
@settings(max_examples=60)
# The spec's example: the batch of batch_norm_backward's example, two rows per rank.
@example((SPEC_DY, SPEC_X, torch.ones(1), [2, 2], DEFAULT_EPS))
# A rank with no sample still takes part and gets the whole batch's grad_weight and grad_bias.
@example((SPEC_DY, SPEC_X, torch.ones(1), [1, 0, 3], 0.1))
@given(rank_slices())
def test_sync_backward_matches_autograd_on_the_concatenation(impl, case):
    """Every rank's grad_input is its rows of the whole batch's, and every rank returns the
    whole batch's grad_weight and grad_bias."""
    grad_output, x, weight, sizes, eps = case
    run = impl.run_ranks("sync_batch_norm_backward", _rank_args(grad_output, x, weight, sizes, eps))
    _check_ranks(run.results, grad_output, x, weight, sizes, eps)


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(rank_slices())
def test_one_all_reduce_call_per_rank(impl, case):
    """The count, and in the same run the gradients against the oracle."""
    grad_output, x, weight, sizes, eps = case
    run = impl.run_ranks("sync_batch_norm_backward", _rank_args(grad_output, x, weight, sizes, eps))
    for rank, calls in enumerate(run.calls):
        assert calls == 1, (
            f"sync_batch_norm_backward() on rank {rank} of {_world_note(sizes)} called all_reduce "
            f"{calls} time(s); it must call it exactly once: pack sum(grad_output), "
            "sum(grad_output * x_hat) and the count into one tensor of length 2C + 1 and reduce that")
    assert_ordinary_answer(run.results, None,
                           compare=lambda got, _, what: _check_ranks(got, grad_output, x, weight, sizes, eps))
