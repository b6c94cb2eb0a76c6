"""Do-nothing, the best per function: all_gather_uneven makes the spec's two all_reduce calls
(the lengths, then a zero tensor of the padded shape) and returns zeros of every rank's
length; gather_predictions gathers the indices that way, raises ValueError as the spec says
(an index outside the dataset, a sample no rank evaluated) and returns zeros of the right
shape."""

import torch
import torch.distributed


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    all_reduce(x.new_zeros((world_size, max(sizes), *x.shape[1:])))
    return [x.new_zeros((n, *x.shape[1:])) for n in sizes]


def _gathered_indices(indices, rank, world_size, all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64)
    lengths[rank] = indices.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    slots = indices.new_zeros((world_size, max(sizes)))
    slots[rank, :indices.shape[0]] = indices
    all_reduce(slots)
    return torch.cat([slots[r, :n] for r, n in enumerate(sizes)])


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    all_gather_uneven(preds, rank, world_size, all_reduce)
    every = _gathered_indices(indices, rank, world_size, all_reduce)
    if bool(((every < 0) | (every >= dataset_len)).any()):
        raise ValueError("an index is outside the dataset")
    if set(every.tolist()) != set(range(dataset_len)):
        raise ValueError("a sample was evaluated by no rank")
    return preds.new_zeros((dataset_len, *preds.shape[1:]))
