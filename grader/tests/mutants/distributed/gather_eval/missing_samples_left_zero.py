"""Mistake: never checks that every sample was evaluated (nor that the indices lie in the
dataset): a sample DistributedSampler(drop_last=True) gave to no rank comes back as a row of
zeros, a score computed over it is silently wrong."""

import torch
import torch.distributed

CAUGHT_BY = ('test_a_sample_outside_or_left_out_raises_value_error',)

def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    slots = x.new_zeros((world_size, max(sizes), *x.shape[1:]))
    slots[rank, :x.shape[0]] = x
    all_reduce(slots)
    return [slots[r, :n] for r, n in enumerate(sizes)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    every_pred = torch.cat(all_gather_uneven(preds, rank, world_size, all_reduce))
    every_index = torch.cat(all_gather_uneven(indices, rank, world_size, all_reduce))
    out = preds.new_zeros((dataset_len, *preds.shape[1:]))
    keep = every_index < dataset_len
    out[every_index[keep]] = every_pred[keep]
    return out
