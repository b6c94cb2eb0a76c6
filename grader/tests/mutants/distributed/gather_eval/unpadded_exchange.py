"""Mistake: exchanges each rank's rows without padding them to the longest: the data tensor is
(world_size, n_rank, *rest), so the ranks sum tensors of different shapes (gloo refuses them:
"invalid tensor size"; the grader's all_reduce says so)."""

import torch
import torch.distributed

CAUGHT_BY = ('test_every_rank_gets_every_ranks_tensor', 'test_uneven_shards_without_padding')


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    slots = x.new_zeros((world_size, *x.shape))
    slots[rank] = x
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
