"""Mistake: counts samples (N) instead of elements per channel (N * H * W * ...), so with
spatial dims the mean and variance are too large."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = (
    "test_batch_stats_are_per_channel_sums_and_count",
    "test_stats_equal_those_of_the_concatenation",
    "test_batch_norm_equals_f_batch_norm_on_the_concatenation",
    "test_no_element_anywhere_raises_value_error",
    "test_gloo_processes_agree_with_f_batch_norm",
)

AllReduce = Callable[[torch.Tensor], object]


def _reduced_dims(x: torch.Tensor) -> tuple[int, ...]:
    """Every dim but the channel dim 1."""
    return (0, *range(2, x.dim()))


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel sum, sum of squares, and elements per channel (0-dim)."""
    dims = _reduced_dims(x)
    count = torch.tensor(x.shape[0], dtype=x.dtype)
    return x.sum(dim=dims), (x * x).sum(dim=dims), count


def sync_batch_stats(
    x: torch.Tensor, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Global mean and biased variance per channel; one all_reduce of [sum, sum_sq, count]."""
    total, total_sq, count = batch_stats(x)
    channels = x.shape[1]
    packed = torch.cat([total, total_sq, count.reshape(1)])
    all_reduce(packed)
    total, total_sq, count = packed[:channels], packed[channels:-1], packed[-1]
    if count.item() == 0:
        raise ValueError("no rank holds any element: the batch statistics are undefined")
    mean = total / count
    var = (total_sq / count - mean * mean).clamp_min(0)
    return mean, var


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
    all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    """``F.batch_norm(training=True)`` on the concatenation of every rank's batch."""
    mean, var = sync_batch_stats(x, all_reduce=all_reduce)
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    scale = weight / torch.sqrt(var + eps)
    return (x - mean.reshape(shape)) * scale.reshape(shape) + bias.reshape(shape)
