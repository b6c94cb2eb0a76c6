"""Do-nothing, the best per function: batch_stats returns zeros; sync_batch_stats makes its one
all_reduce of the element count, raises ValueError when no rank holds anything and returns
mean 0, variance 1 otherwise; sync_batch_norm returns the bias broadcast over the batch."""

import torch
import torch.distributed


def batch_stats(x):
    c = x.shape[1]
    return x.new_zeros(c), x.new_zeros(c), x.new_zeros(())


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    c = x.shape[1]
    packed = x.new_zeros(2 * c + 1)
    packed[-1] = x.numel() // c
    all_reduce(packed)
    if packed[-1].item() == 0:
        raise ValueError("no rank holds any element")
    return x.new_zeros(c), x.new_ones(c)


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    return torch.zeros_like(x) + bias.reshape(1, -1, *([1] * (x.dim() - 2)))
