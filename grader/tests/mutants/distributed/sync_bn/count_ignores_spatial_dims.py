"""Mistake: counts samples (N) instead of elements per channel (N * H * W * ...). The merged
statistics survive it (every rank has the same spatial shape, so the weights keep their
ratios), but batch_stats' count is wrong, and a batch with a spatial size 0 but N > 0 looks
non-empty: its NaN mean and no ValueError."""

from collections.abc import Callable

import torch
import torch.distributed

CAUGHT_BY = (
    "test_batch_stats_are_per_channel_mean_variance_and_count",
    "test_no_element_anywhere_raises_value_error",
)

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
    count = x.shape[0]
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
    """Global mean and biased variance per channel: each rank writes its (mean, var, count)
    into its own row of a zero table, one all_reduce fills every row on every rank, and the
    rows merge as Chan et al.'s parallel formula does."""
    mean, var, count = batch_stats(x)
    channels = x.shape[1]
    table = x.new_zeros(world_size, 2 * channels + 1)
    table[rank] = torch.cat([mean, var, count.reshape(1)])
    all_reduce(table)
    means, variances, counts = table[:, :channels], table[:, channels:-1], table[:, -1:]
    total = counts.sum()
    if total.item() == 0:
        raise ValueError("no rank holds any element: the batch statistics are undefined")
    share = counts / total
    mean = (share * means).sum(dim=0)
    spread = means - mean
    return mean, (share * (variances + spread * spread)).sum(dim=0)


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, rank: int, world_size: int,
    eps: float = 1e-5, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    """``F.batch_norm(training=True)`` on the concatenation of every rank's batch."""
    mean, var = sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    scale = weight / torch.sqrt(var + eps)
    return (x - _per_channel(mean, x)) * _per_channel(scale, x) + _per_channel(bias, x)
