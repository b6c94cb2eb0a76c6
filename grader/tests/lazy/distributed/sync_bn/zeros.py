"""Do-nothing: zeros of the right shapes and dtype. The synced functions still make their one
all_reduce call (on a zero tensor), so the ranks meet and the call count is right."""

import torch
import torch.distributed


def batch_stats(x):
    c = x.shape[1]
    return x.new_zeros(c), x.new_zeros(c), x.new_zeros(())


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    return x.new_zeros(x.shape[1]), x.new_zeros(x.shape[1])


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    return torch.zeros_like(x)
