"""Mistake: gathers with one all_reduce per rank (each sums one rank's padded rows, the others
sending zeros), after the lengths: world_size + 1 collective calls where two carry the same,
world_size times the round trips."""

import torch
import torch.distributed

CAUGHT_BY = ('test_two_all_reduce_calls_the_lengths_then_the_data',)


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    out = []
    for r, n in enumerate(sizes):
        part = x.new_zeros((max(sizes), *x.shape[1:]))
        if r == rank:
            part[:n] = x
        all_reduce(part)
        out.append(part[:n])
    return out


def _checked(preds, indices, dataset_len, rank, world_size, all_reduce):
    """Every rank's predictions and indices, concatenated, after the spec's ValueErrors."""
    every_pred = torch.cat(all_gather_uneven(preds, rank, world_size, all_reduce))
    every_index = torch.cat(all_gather_uneven(indices, rank, world_size, all_reduce))
    if bool(((every_index < 0) | (every_index >= dataset_len)).any()):
        raise ValueError("an index is outside the dataset")
    if set(every_index.tolist()) != set(range(dataset_len)):
        raise ValueError("a sample was evaluated by no rank")
    return every_pred, every_index


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    every_pred, every_index = _checked(preds, indices, dataset_len, rank, world_size, all_reduce)
    out = preds.new_zeros((dataset_len, *preds.shape[1:]))
    out[every_index] = every_pred
    return out
