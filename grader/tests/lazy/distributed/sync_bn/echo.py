"""Do-nothing: returns the input batch (three times for batch_stats, twice for
sync_batch_stats) with no collective."""

import torch
import torch.distributed


def batch_stats(x):
    return x, x, x


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    return x, x


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    return x
