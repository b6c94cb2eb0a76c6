"""Do-nothing: zeros of the input's shape and dtype, one per rank, from all_gather_uneven; zeros
of (dataset_len, *rest) from gather_predictions. No collective."""

import torch
import torch.distributed


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    return [torch.zeros_like(x) for _ in range(world_size)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    return preds.new_zeros((dataset_len, *preds.shape[1:]))
