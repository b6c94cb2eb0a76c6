"""Mistake: puts the gathered rows back in order as mmcv's ``collect_results_gpu`` does, by
taking the ranks' first rows, then their second rows, ... (``zip`` over the ranks' parts) and
cutting at dataset_len, ignoring the indices. That is DistributedSampler's order only when it
does not shuffle: a shuffled sampler's rows come back in its random order, and with shards of
different lengths ``zip`` stops at the shortest and drops rows.

Provenance: open-mmlab/mmcv, mmcv/engine/test.py (commit 85917789efa6da55daacf6f9370d5e65a0355f0a):
``collect_results_gpu`` pickles each rank's results into a uint8 tensor, all_gathers the
lengths, pads every part to the longest, all_gathers the parts, cuts each back to its length,
then orders them with ``for res in zip(*part_list): ordered_results.extend(list(res))`` and
``ordered_results[:size]`` (mmdet's test loader never shuffles). Rewritten here over tensors,
the all_gathers built from all_reduce (no code copied).
"""

import torch
import torch.distributed

CAUGHT_BY = ('test_shuffled_shards_come_back_in_dataset_order', 'test_uneven_shards_without_padding')


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    padded = x.new_zeros((world_size, max(sizes), *x.shape[1:]))
    padded[rank, :x.shape[0]] = x
    all_reduce(padded)
    return [padded[r, :n] for r, n in enumerate(sizes)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    parts = all_gather_uneven(preds, rank, world_size, all_reduce)
    every_index = torch.cat(all_gather_uneven(indices, rank, world_size, all_reduce))
    if bool(((every_index < 0) | (every_index >= dataset_len)).any()):
        raise ValueError("an index is outside the dataset")
    if set(every_index.tolist()) != set(range(dataset_len)):
        raise ValueError("a sample was evaluated by no rank")
    parts = [p for p in parts if len(p)]  # mmcv skips an empty part
    ordered = [row for rows in zip(*parts) for row in rows]
    if not ordered:
        return preds.new_zeros((0, *preds.shape[1:]))
    return torch.stack(ordered[:dataset_len])
