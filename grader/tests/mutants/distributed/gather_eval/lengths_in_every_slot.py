"""Mistake: each rank writes its length into every slot of the lengths tensor (torch.full
instead of one slot of zeros): after the sum every slot holds the total, so every rank's
rows are cut to the wrong length."""

import torch
import torch.distributed

CAUGHT_BY = ('test_every_rank_gets_every_ranks_tensor', 'test_matches_single_process_predictions')


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.full((world_size,), x.shape[0], dtype=torch.int64, device=x.device)
    all_reduce(lengths)
    sizes = lengths.tolist()
    slots = x.new_zeros((world_size, max(sizes), *x.shape[1:]))
    slots[rank, :x.shape[0]] = x
    all_reduce(slots)
    return [slots[r, :n] for r, n in enumerate(sizes)]


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
