"""Right, written otherwise: the plain Python way. all_gather_uneven pads with ``torch.cat``
of a zero block, and sums a list of per-rank tensors stacked in a new dim;
gather_predictions collects the rows in a dict keyed by index (a repeated sample overwrites
its equal row) and stacks them in index order."""

import torch
import torch.distributed


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    counts = [0] * world_size
    counts[rank] = len(x)
    counts_t = torch.tensor(counts, device=x.device)
    all_reduce(counts_t)
    counts = [int(c) for c in counts_t]
    longest = max(counts)
    mine = torch.cat([x, x.new_zeros((longest - len(x), *x.shape[1:]))])
    stacked = torch.stack([mine if r == rank else torch.zeros_like(mine) for r in range(world_size)])
    all_reduce(stacked)
    return [stacked[r].narrow(0, 0, counts[r]).clone() for r in range(world_size)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    rows = all_gather_uneven(preds, rank, world_size, all_reduce)
    where = all_gather_uneven(indices, rank, world_size, all_reduce)
    by_index = {}
    for part, idx in zip(rows, where):
        for row, i in zip(part, idx.tolist()):
            if not 0 <= i < dataset_len:
                raise ValueError(f"index {i} is not a sample of the dataset")
            by_index[i] = row
    if len(by_index) != dataset_len:
        raise ValueError("not every sample was evaluated")
    if dataset_len == 0:
        return preds.new_zeros((0, *preds.shape[1:]))
    return torch.stack([by_index[i] for i in range(dataset_len)])
