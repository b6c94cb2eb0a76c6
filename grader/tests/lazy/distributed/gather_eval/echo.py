"""Do-nothing: hands the rank's own tensor back: once per rank from all_gather_uneven, as it is
from gather_predictions. No collective."""

import torch
import torch.distributed


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    return [x for _ in range(world_size)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    return preds
