"""Do-nothing: the synced functions make their one all_reduce of the element count and raise
ValueError when no rank holds anything, as the spec says, and return zeros otherwise."""

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
    return x.new_zeros(c), x.new_zeros(c)


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    return torch.zeros_like(x)
