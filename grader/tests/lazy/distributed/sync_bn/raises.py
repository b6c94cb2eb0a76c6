"""Do-nothing: every function raises the spec's exception (ValueError) on every call, the
synced ones after their one all_reduce (as the spec asks of the empty case)."""

import torch
import torch.distributed


def batch_stats(x):
    raise ValueError("no element")


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    raise ValueError("no rank holds any element")


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
