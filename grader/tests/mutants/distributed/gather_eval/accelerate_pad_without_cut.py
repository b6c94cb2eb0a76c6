"""Mistake: pads every rank's rows to the longest and gathers them, as accelerate's
``pad_across_processes`` followed by ``gather`` does, but never cuts the padding off: each
entry comes back with the longest rank's length, zero rows at its end.

Provenance: huggingface/accelerate, src/accelerate/utils/operations.py (commit
6a0677cc2778d9e807f97e386a29eab0522d1731): ``pad_across_processes`` gathers every rank's
shape, pads the tensor along ``dim`` to the largest with ``pad_index`` and returns it padded;
cutting the padding off again is left to the caller. Rewritten here with the all_gather built
from all_reduce (no code copied).
"""

import torch
import torch.distributed

CAUGHT_BY = ('test_every_rank_gets_every_ranks_tensor',)


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    sizes = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    sizes[rank] = x.shape[0]
    all_reduce(sizes)
    longest = int(sizes.max())
    padded = x.new_zeros((longest, *x.shape[1:]))
    padded[:x.shape[0]] = x
    gathered = x.new_zeros((world_size, *padded.shape))
    gathered[rank] = padded
    all_reduce(gathered)
    return list(gathered.unbind(0))


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=preds.device)
    lengths[rank] = preds.shape[0]
    all_reduce(lengths)
    every_pred = torch.cat([p[:n] for p, n in zip(all_gather_uneven(preds, rank, world_size, all_reduce),
                                                  lengths.tolist())])
    every_index = torch.cat([i[:n] for i, n in zip(all_gather_uneven(indices, rank, world_size, all_reduce),
                                                   lengths.tolist())])
    if bool(((every_index < 0) | (every_index >= dataset_len)).any()):
        raise ValueError("an index is outside the dataset")
    if set(every_index.tolist()) != set(range(dataset_len)):
        raise ValueError("a sample was evaluated by no rank")
    out = preds.new_zeros((dataset_len, *preds.shape[1:]))
    out[every_index] = every_pred
    return out
