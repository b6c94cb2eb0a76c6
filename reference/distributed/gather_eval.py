"""Reference solution: an all_gather of uneven tensors from two all_reduces, and a sharded
evaluation's predictions put back in dataset order."""

from collections.abc import Callable

import torch
import torch.distributed

AllReduce = Callable[[torch.Tensor], object]


def all_gather_uneven(x: torch.Tensor, rank: int, world_size: int,
                      all_reduce: AllReduce = torch.distributed.all_reduce) -> list[torch.Tensor]:
    """Each rank writes its length, then its rows padded to the longest, into its own slot of
    a zero tensor; a SUM over the ranks fills every slot. Cut each slot to its length."""
    lengths = torch.zeros(world_size, dtype=torch.int64, device=x.device)
    lengths[rank] = x.shape[0]
    all_reduce(lengths)
    sizes = lengths.tolist()
    slots = x.new_zeros((world_size, max(sizes), *x.shape[1:]))
    slots[rank, :x.shape[0]] = x
    all_reduce(slots)
    return [slots[r, :n] for r, n in enumerate(sizes)]


def gather_predictions(preds: torch.Tensor, indices: torch.Tensor, dataset_len: int, rank: int,
                       world_size: int,
                       all_reduce: AllReduce = torch.distributed.all_reduce) -> torch.Tensor:
    """Gather every rank's predictions and the dataset indices they belong to, then put each
    row at its index: a sample the sampler repeated lands on its own row again."""
    every_pred = torch.cat(all_gather_uneven(preds, rank, world_size, all_reduce))
    every_index = torch.cat(all_gather_uneven(indices, rank, world_size, all_reduce))
    if bool(((every_index < 0) | (every_index >= dataset_len)).any()):
        raise ValueError(f"an index is outside the dataset [0, {dataset_len})")
    seen = torch.zeros(dataset_len, dtype=torch.bool, device=every_index.device)
    seen[every_index] = True
    if not bool(seen.all()):
        raise ValueError("some samples were evaluated by no rank")
    gathered = preds.new_zeros((dataset_len, *preds.shape[1:]))
    gathered[every_index] = every_pred
    return gathered
