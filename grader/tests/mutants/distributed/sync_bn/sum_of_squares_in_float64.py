"""Mistake: keeps the one-pass formula, sum_sq / count - mean ** 2 over summed sums of squares,
but "fixes" it by summing in float64 and casting back. That rescues float32 batches, not
float64 ones: far enough from 0 (1e7 and more, spread 1) float64 cancels the same way, and
torch has no wider dtype to flee to. Merging (mean, var, count) needs none."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = ("test_stats_stay_accurate_far_from_zero",)

AllReduce = Callable[[torch.Tensor], object]


def _reduced_dims(x: torch.Tensor) -> tuple[int, ...]:
    """Every dim but the channel dim 1."""
    return (0, *range(2, x.dim()))


def _per_channel(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A ``(C,)`` tensor as ``(1, C, 1, ..., 1)``, to broadcast along ``x``'s dim 1."""
    return t.reshape((1, x.shape[1]) + (1,) * (x.dim() - 2))


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel mean and biased variance (two passes: the mean, then the squared
    deviations from it), and elements per channel (0-dim); zeros for an empty batch."""
    channels = x.shape[1]
    count = x.numel() // channels
    if count == 0:
        return x.new_zeros(channels), x.new_zeros(channels), x.new_tensor(0)
    dims = _reduced_dims(x)
    mean = x.mean(dim=dims)
    centred = x - _per_channel(mean, x)
    return mean, (centred * centred).mean(dim=dims), x.new_tensor(count)


def sync_batch_stats(
    x: torch.Tensor, rank: int, world_size: int,
    all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Global mean and biased variance per channel; summed sums of squares, in float64."""
    wide = x.double()
    dims = _reduced_dims(wide)
    channels = x.shape[1]
    packed = torch.cat([wide.sum(dim=dims), (wide * wide).sum(dim=dims), wide.new_tensor([x.numel() // channels])])
    all_reduce(packed)
    total, total_sq, count = packed[:channels], packed[channels:-1], packed[-1]
    if count.item() == 0:
        raise ValueError("no rank holds any element: the batch statistics are undefined")
    mean = total / count
    return mean.to(x.dtype), (total_sq / count - mean * mean).clamp_min(0).to(x.dtype)


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, rank: int, world_size: int,
    eps: float = 1e-5, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    """``F.batch_norm(training=True)`` on the concatenation of every rank's batch."""
    mean, var = sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    scale = weight / torch.sqrt(var + eps)
    return (x - _per_channel(mean, x)) * _per_channel(scale, x) + _per_channel(bias, x)
