"""Mistake: the variance E[x^2] - E[x]^2 is not clamped at 0: for a channel that holds one
value over and over it rounds a hair below 0 about one time in five, a negative variance
the spec's pitfall warns about."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = ("test_variance_is_never_negative",)

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
    packed = torch.cat([total, total_sq, count.reshape(1)])
    all_reduce(packed)
    total, total_sq, count = packed[:channels], packed[channels:-1], packed[-1]
    if count.item() == 0:
        raise ValueError("no rank holds any element: the batch statistics are undefined")
    mean = total / count
    var = total_sq / count - mean * mean
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
