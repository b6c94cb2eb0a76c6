"""Mistake: detectron2's NaiveSyncBatchNorm with stats_mode="N", rewritten for this drill's
signatures. Each rank all-reduces [mean, mean of squares, 1] times its batch size N, divides by
the total batch size, and takes var = meansqr - mean * mean, not clamped. Weighting by N is
right here (every rank has the same spatial shape), but the variance is the one-pass formula
over summed moments: in float32, with the mean far larger than the spread, it is mostly
rounding, and for a constant channel it can come out below 0.

Provenance: facebookresearch/detectron2, detectron2/layers/batch_norm.py (commit
047d4775b447cb23539222c5c54a1ec17fb4f3c3), NaiveSyncBatchNorm.forward: `mean` and `meansqr`
per channel, `vec = cat([mean, meansqr, ones(1)]) * B` all-reduced (zeros plus
`input.sum()` for an empty batch), divided by the total batch clamped at 1,
`var = meansqr - mean * mean`. Rewritten here over this drill's functions (no code copied);
batch_stats is the spec's, and an empty world raises as the spec says.
"""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = (
    "test_variance_is_never_negative",
    "test_stats_stay_accurate_far_from_zero",
)

AllReduce = Callable[[torch.Tensor], object]


def _channel_dims(x: torch.Tensor) -> list[int]:
    return [0, *range(2, x.dim())]


def _broadcastable(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    c = x.shape[1]
    n = x.numel() // c
    if n == 0:
        return x.new_zeros(c), x.new_zeros(c), x.new_tensor(0)
    mean = x.mean(dim=_channel_dims(x))
    return mean, ((x - _broadcastable(mean, x)) ** 2).mean(dim=_channel_dims(x)), x.new_tensor(n)


def sync_batch_stats(
    x: torch.Tensor, rank: int, world_size: int,
    all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    batch, c = x.shape[0], x.shape[1]
    if x.numel() == 0:
        vec = x.new_zeros(2 * c + 1)
    else:
        mean = x.mean(dim=_channel_dims(x))
        meansqr = (x * x).mean(dim=_channel_dims(x))
        vec = torch.cat([mean, meansqr, x.new_ones(1)])
    vec = vec * batch
    all_reduce(vec)
    total_batch = vec[-1]
    if total_batch.item() == 0:
        raise ValueError("no rank holds any element")
    mean, meansqr = (vec[:-1] / total_batch).split(c)
    return mean, meansqr - mean * mean


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, rank: int, world_size: int,
    eps: float = 1e-5, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    mean, var = sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    scale = weight * torch.rsqrt(var + eps)
    shift = bias - mean * scale
    return x * _broadcastable(scale, x) + _broadcastable(shift, x)
