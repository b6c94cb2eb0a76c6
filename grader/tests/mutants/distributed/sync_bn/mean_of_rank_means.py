"""Mistake: averages the per-rank means and mean squares over the ranks, which weights a rank
with 1 sample like a rank with 100 (right only when every rank holds the same count)."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = (
    "test_stats_equal_those_of_the_concatenation",
    "test_batch_norm_equals_f_batch_norm_on_the_concatenation",
    "test_gloo_processes_agree_with_f_batch_norm",
)

AllReduce = Callable[[torch.Tensor], object]


def _reduced_dims(x: torch.Tensor) -> tuple[int, ...]:
    """Every dim but the channel dim 1."""
    return (0, *range(2, x.dim()))


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel sum, sum of squares, and elements per channel (0-dim)."""
    dims = _reduced_dims(x)
    count = torch.tensor(x.numel() // x.shape[1], dtype=x.dtype)
    return x.sum(dim=dims), (x * x).sum(dim=dims), count


def sync_batch_stats(
    x: torch.Tensor, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Global mean and biased variance per channel; one all_reduce of [sum, sum_sq, count]."""
    total, total_sq, count = batch_stats(x)
    channels = x.shape[1]
    holds = (count > 0).to(x.dtype)
    local = torch.cat([total / count.clamp_min(1), total_sq / count.clamp_min(1), holds.reshape(1)])
    all_reduce(local)
    means, mean_sqs, ranks = local[:channels], local[channels:-1], local[-1]
    if ranks.item() == 0:
        raise ValueError("no rank holds any element: the batch statistics are undefined")
    mean = means / ranks
    var = (mean_sqs / ranks - mean * mean).clamp_min(0)
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
