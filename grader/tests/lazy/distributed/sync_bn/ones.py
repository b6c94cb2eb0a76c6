"""Do-nothing: batch_stats returns ones; the synced functions make their one all_reduce and
return mean 0 and variance 1 (the statistics of an already normalised batch), and
sync_batch_norm returns the bias broadcast over the batch."""

import torch
import torch.distributed


def batch_stats(x):
    c = x.shape[1]
    return x.new_ones(c), x.new_ones(c), x.new_ones(())


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    return x.new_zeros(x.shape[1]), x.new_ones(x.shape[1])


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    return torch.zeros_like(x) + bias.reshape(1, -1, *([1] * (x.dim() - 2)))
