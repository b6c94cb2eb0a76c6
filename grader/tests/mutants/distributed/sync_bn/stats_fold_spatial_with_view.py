"""Mistake: batch_stats folds the spatial dims with `x.view(N, C, L)` and sums over dims 0 and
2: right for a contiguous batch (empty ones included), but a channels-last batch or a strided
view makes `view` raise; summing over a tuple of dims works in any layout."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = ("test_batch_norm_equals_f_batch_norm_on_the_concatenation",)

AllReduce = Callable[[torch.Tensor], object]


def _reduced_dims(x: torch.Tensor) -> tuple[int, ...]:
    """Every dim but the channel dim 1."""
    return (0, *range(2, x.dim()))


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel sum, sum of squares, and elements per channel (0-dim)."""
    n, c = x.shape[:2]
    flat = x.view(n, c, x.numel() // max(n * c, 1) if n else 1)
    count = torch.tensor(x.numel() // c, dtype=x.dtype)
    return flat.sum(dim=(0, 2)), (flat * flat).sum(dim=(0, 2)), count


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
