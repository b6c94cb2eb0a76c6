"""Mistake: checks only that every index is below dataset_len, so an index of -1 passes and
Python's indexing takes it for the last sample: a bad index writes over the last row instead
of raising ValueError."""

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
    if bool((every_index >= dataset_len).any()):
        raise ValueError("an index is outside the dataset")
    seen = torch.zeros(dataset_len, dtype=torch.bool)
    seen[every_index] = True
    if not bool(seen.all()):
        raise ValueError("some samples were evaluated by no rank")
    out = preds.new_zeros((dataset_len, *preds.shape[1:]))
    out[every_index] = every_pred
    return out
