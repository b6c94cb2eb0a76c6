"""Synchronised batch normalisation across data-parallel ranks.

In data-parallel training every rank (process) holds its own slice of the
batch. Plain batch norm would normalise each slice with its own statistics;
synchronised batch norm normalises every slice with the statistics of the
*whole* batch, as if all slices had been concatenated on one machine.

Each rank describes its slice by three numbers per channel: its mean, its
(biased) variance and its element count. One collective shares them, and every
rank merges them into the same global mean and variance with the parallel
variance formula (Chan, Golub and LeVeque), which is what PyTorch's
``nn.SyncBatchNorm`` does with the (mean, invstd, count) of every rank.

Why not add up sums and sums of squares, ``var = sum_sq / count - mean ** 2``?
The notes derive that one-sync formula (BatchNorm/SyncBN in depth, 3.1), and it
is exact on paper, but in floating point it subtracts two huge, nearly equal
numbers when the data sit far from 0: in float32 the four values 10001, 10002,
10003 and 10004 have variance 1.25, and ``E[x^2] - E[x]^2`` gives -8.0. The
mean and the squared deviations *from the mean* never cancel like that.

The collective is an argument (default ``torch.distributed.all_reduce``), so
the grader can run your ranks as threads with an in-memory stand-in, and you
can run one rank by yourself with ``rank=0, world_size=1,
all_reduce=lambda t: None``. With ``torch.distributed`` the rank and world size
are ``dist.get_rank()`` and ``dist.get_world_size()``.
"""

from collections.abc import Callable

import torch
import torch.distributed

AllReduce = Callable[[torch.Tensor], object]


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel mean, biased variance and element count of one rank's batch.

    Spec:
        - ``x`` is a floating-point tensor of shape ``(N, C, *spatial)``: batch
          first, channels second, then any number (0 included) of spatial dims,
          e.g. ``(N, C)``, ``(N, C, L)``, ``(N, C, H, W)``. ``C >= 1``; ``N`` may
          be 0 (this rank holds no samples), and so may a spatial size. ``x`` may be
          in any memory layout: channels-last (``x.to(memory_format=torch.channels_last)``),
          or a strided view of a larger tensor.
        - Return the tuple ``(mean, var, count)``:
            * ``mean[c]``: the mean of every element of channel ``c``, shape ``(C,)``;
            * ``var[c]``: their *biased* variance (divide by the count, as batch
              norm does), shape ``(C,)``, computed in two passes: the mean first,
              then the mean of the squared deviations ``(x - mean) ** 2``;
            * ``count``: how many elements each channel has, that is
              ``N * H * W * ...``, as a 0-dim tensor of ``x``'s dtype.
        - When ``count`` is 0, ``mean`` and ``var`` are zeros (not NaN): an empty
          rank then adds nothing when the ranks' statistics are merged.
        - All three have ``x``'s dtype, float16 and bfloat16 included.

    Example:
        >>> x = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])   # N=3, C=2
        >>> batch_stats(x)
        (tensor([3., 4.]), tensor([2.6667, 2.6667]), tensor(3.))

    How: reduce over every dim except dim 1, ``x.mean(dim=(0, 2, 3, ...))``;
    reshape the mean to ``(1, C, 1, ..., 1)`` to subtract it from ``x``; the
    count is ``x.numel() // C``.

    Pitfalls:
        - The count is elements per channel, not samples: with spatial dims a
          sample contributes ``H * W`` values to each channel.
        - ``x.transpose(0, 1).reshape(C, -1)`` fails on an empty batch (torch
          cannot infer ``-1`` from 0 elements); reducing over a tuple of dims
          works for any size and any layout (``x.view(N, C, -1)`` refuses many
          non-contiguous ones).
        - ``(x * x).mean() - mean ** 2`` is the one-pass formula that cancels
          far from 0 (see the module's docstring); subtract the mean, then square.
    """
    raise NotImplementedError


def sync_batch_stats(
    x: torch.Tensor, rank: int, world_size: int,
    all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Global per-channel mean and (biased) variance over every rank's batch.

    Spec:
        - Every rank calls this at the same time with its own ``x`` of shape
          ``(N_rank, C, *spatial)``, its ``rank`` (``0 <= rank < world_size``) and
          the number of ranks ``world_size``; ``C``, the spatial shape and the
          dtype are the same on every rank, the batch sizes may differ and may
          be 0.
        - Return ``(mean, var)``, each of shape ``(C,)`` and ``x``'s dtype, equal
          on every rank: the mean and the *biased* variance of each channel over
          the concatenation of all ranks' batches.
        - Call ``all_reduce(t)`` exactly once. ``all_reduce`` sums ``t`` over the
          ranks *in place* and its return value means nothing, so use it to
          gather: every rank makes a zero tensor of shape
          ``(world_size, 2 * C + 1)``, writes its own ``batch_stats`` (mean, var
          and count) into row ``rank`` and reduces it; afterwards every rank holds
          every rank's row (``dist.all_gather_into_tensor``, which
          ``nn.SyncBatchNorm`` uses, does the same in one call).
        - Merge the rows with the parallel formula: with ``n_r``, ``m_r``, ``v_r``
          rank r's count, mean and variance and ``n = sum(n_r)``,
          ``mean = sum(n_r * m_r) / n`` and
          ``var = sum(n_r * (v_r + (m_r - mean) ** 2)) / n``
          (the spread within each rank plus the spread of the rank means).
        - If no rank holds any element (the global count is 0), raise
          ``ValueError`` on every rank, *after* the ``all_reduce``: a rank that
          skips the collective leaves the others waiting forever.

    Example (two ranks, C=1):
        rank 0: x = [[1.], [3.]]      rank 1: x = [[8.]]
        rank 0's row is (mean 2, var 1, count 2), rank 1's is (8, 0, 1);
        n = 3, mean = (2 * 2 + 1 * 8) / 3 = 4,
        var = (2 * (1 + (2 - 4) ** 2) + 1 * (0 + (8 - 4) ** 2)) / 3 = 8.667,
        so both ranks return (tensor([4.]), tensor([8.6667])): the variance of
        the concatenation [1, 3, 8]. (The mean of the per-rank means,
        (2 + 8) / 2 = 5, is wrong.)

    Pitfalls:
        - Weight by the counts, never average the ranks' means: a mean of
          per-rank means weights a rank holding 1 sample like a rank holding 100.
        - ``torch.var`` defaults to the unbiased estimator; batch norm
          normalises with the biased one.
        - One collective, not one per statistic: every call is a network
          round trip, and ranks must all make the same calls.
        - ``sum_sq / count - mean ** 2`` over summed sums of squares: the notes'
          own code does this (BatchNorm/SyncBN in depth, 3.1). It cancels
          catastrophically in float32 when the mean is large beside the spread,
          and can even come out below 0; summing in float64 only moves that edge
          further from 0. Every term of the parallel formula is a variance or a
          square: it cannot.
    """
    raise NotImplementedError


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, rank: int, world_size: int,
    eps: float = 1e-5, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    """Batch-normalise this rank's slice with the statistics of the whole batch.

    Spec:
        - ``x``: this rank's ``(N_rank, C, *spatial)`` batch; ``weight`` and
          ``bias``: shape ``(C,)``, the same on every rank. Any of them may be
          non-contiguous (a channels-last batch, strided views). ``rank`` and
          ``world_size`` as in ``sync_batch_stats``.
        - Return a tensor shaped like ``x``: what
          ``F.batch_norm(X, None, None, weight, bias, training=True, eps=eps)``
          gives for the concatenation ``X`` of all ranks' batches (along dim 0),
          restricted to this rank's rows:
          ``(x - mean) / sqrt(var + eps) * weight + bias`` per channel, with
          ``mean`` and ``var`` from ``sync_batch_stats`` (one ``all_reduce``).
        - A rank with ``N_rank == 0`` still takes part and returns its empty
          slice; if no rank holds anything, ``ValueError`` (from
          ``sync_batch_stats``).

    Example (one rank, so the collective has nothing to add):
        >>> x = torch.tensor([[1.], [3.]])
        >>> sync_batch_norm(x, torch.ones(1), torch.zeros(1), 0, 1, eps=0.0,
        ...                 all_reduce=lambda t: None)
        tensor([[-1.],
                [ 1.]])

    How: reshape the ``(C,)`` statistics, weight and bias to
    ``(1, C, 1, ..., 1)`` (one 1 per spatial dim) so they broadcast along
    dim 1 of ``x``.

    Pitfalls:
        - ``eps`` goes inside the square root: ``sqrt(var + eps)``, not
          ``sqrt(var) + eps``.
        - A ``(C,)`` tensor broadcasts against the *last* dim of ``x``, not the
          channel dim: reshape it first.

    Forbidden: ``F.batch_norm``, ``torch.batch_norm`` (and torch's other
    batch-norm kernels, ``torch.batch_norm_gather_stats_with_counts`` among
    them) and the ``nn.BatchNorm*`` and ``nn.SyncBatchNorm`` modules; build it
    from ``sync_batch_stats``.
    """
    raise NotImplementedError
