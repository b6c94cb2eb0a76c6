"""Mistake: concatenates the gathered predictions rank after rank and cuts them at dataset_len,
ignoring the indices: right for a sampler that hands out contiguous blocks, wrong for
DistributedSampler, which strides (rank r takes positions r, r + world_size, ...) and may
shuffle."""

import torch
import torch.distributed

CAUGHT_BY = ('test_matches_single_process_predictions', 'test_padded_samples_come_back_once',
             'test_shuffled_shards_come_back_in_dataset_order')

def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
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
    every_pred, _ = _checked(preds, indices, dataset_len, rank, world_size, all_reduce)
    return every_pred[:dataset_len]
