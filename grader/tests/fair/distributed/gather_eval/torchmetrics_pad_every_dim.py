"""Right, written otherwise: gathers as torchmetrics' ``gather_all_tensors`` does. The ranks
exchange their whole shapes (not only the lengths), every dim is padded to the largest with
``F.pad``, and each gathered tensor is cut back with one slice per dim; when every shape is
the same, nothing is padded. gather_predictions sorts the gathered rows by index (stably) and
keeps the first row of each index.

Provenance: Lightning-AI/torchmetrics, src/torchmetrics/utilities/distributed.py (commit
6014ade6f74ab8be55fc23577513ff58600200b2): ``gather_all_tensors`` all_gathers
``torch.tensor(result.shape)``, takes the elementwise max, pads with ``F.pad`` (the pad
amounts listed from the last dim to the first), all_gathers the padded tensors and slices
each by its own shape. Rewritten here with each all_gather made of one all_reduce into
per-rank slots (no code copied).
"""

import torch
import torch.distributed
import torch.nn.functional as F


def all_gather_uneven(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    shapes = torch.zeros((world_size, x.dim()), dtype=torch.long, device=x.device)
    shapes[rank] = torch.tensor(x.shape, device=x.device)
    all_reduce(shapes)
    largest = shapes.max(dim=0).values
    amounts = []
    for have, want in zip(reversed(x.shape), reversed(largest.tolist())):
        amounts += [0, want - have]
    padded = F.pad(x, amounts) if any(amounts) else x
    slots = torch.zeros((world_size, *padded.shape), dtype=x.dtype, device=x.device)
    slots[rank] = padded
    all_reduce(slots)
    return [slots[r][tuple(slice(n) for n in shapes[r].tolist())] for r in range(world_size)]


def gather_predictions(preds, indices, dataset_len, rank, world_size,
                       all_reduce=torch.distributed.all_reduce):
    rows = torch.cat(all_gather_uneven(preds, rank, world_size, all_reduce))
    where = torch.cat(all_gather_uneven(indices, rank, world_size, all_reduce))
    if where.numel() and (int(where.min()) < 0 or int(where.max()) >= dataset_len):
        raise ValueError(f"an index lies outside [0, {dataset_len})")
    order = torch.argsort(where, stable=True)
    where, rows = where[order], rows[order]
    first = torch.ones_like(where, dtype=torch.bool)
    first[1:] = where[1:] != where[:-1]
    if int(first.sum()) != dataset_len:
        raise ValueError("some samples were evaluated by no rank")
    return rows[first]
