"""Right, written otherwise: the merge PyTorch's SyncBatchNorm runs. Each rank's statistics come
from torch.var_mean (Welford's algorithm, not two passes) and travel as (mean, M2, count), M2
the sum of squared deviations; the rows are folded in one rank at a time with the pairwise
update of Chan et al. (delta of the means, weighted n_a * n_b / n), not in one weighted sum.

Provenance: pytorch/pytorch, aten/src/ATen/native/cuda/Normalization.cuh (commit
3f55db3aea697a6d862197cf18f4a9a8fb3a6001), batch_norm_reduce_statistics_kernel: for each rank
j in order, ``var_n += v + (avg - m) ** 2 * n * count * factor`` and
``avg = n * factor * avg + count * factor * m`` with ``factor = 1 / (n + count)`` (there v is
rebuilt from the gathered invstd, ``(1 / invstd ** 2 - eps) * count``); and
torch/nn/modules/_functions.py (commit 016ec49da759b42af4b11b14ce22e8cbd840e5ab), which
gathers ``cat([mean, invstd, count])`` from every rank. Rewritten here in torch over the rows
one all_reduce gathers (no code copied).
"""

import torch
import torch.distributed


def batch_stats(x):
    channels = x.shape[1]
    count = x.numel() // channels
    if count == 0:
        return x.new_zeros(channels), x.new_zeros(channels), x.new_tensor(0)
    var, mean = torch.var_mean(x, dim=[0, *range(2, x.dim())], correction=0)
    return mean, var, x.new_tensor(count)


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    mean, var, count = batch_stats(x)
    rows = x.new_zeros(world_size, 3, x.shape[1])
    rows[rank, 0] = mean
    rows[rank, 1] = var * count
    rows[rank, 2] = count
    all_reduce(rows)
    avg = torch.zeros_like(mean)
    m2 = torch.zeros_like(mean)
    n = torch.zeros_like(mean)
    for row_mean, row_m2, row_count in rows:
        total = n + row_count
        factor = 1 / total.clamp_min(1)
        delta = avg - row_mean
        m2 = m2 + row_m2 + delta * delta * n * row_count * factor
        avg = n * factor * avg + row_count * factor * row_mean
        n = total
    if n[0].item() == 0:
        raise ValueError("no rank holds any element")
    return avg, m2 / n


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    mean, var = sync_batch_stats(x, rank, world_size, all_reduce)
    shape = [1, -1] + [1] * (x.dim() - 2)
    invstd = torch.rsqrt(var + eps)
    return (x - mean.view(shape)) * (invstd * weight).view(shape) + bias.view(shape)
