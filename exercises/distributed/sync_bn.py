"""Synchronised batch normalisation across data-parallel ranks.

In data-parallel training every rank (process) holds its own slice of the
batch. Plain batch norm would normalise each slice with its own statistics;
synchronised batch norm normalises every slice with the statistics of the
*whole* batch, as if all slices had been concatenated on one machine.

The trick is that sums add up across ranks and means do not: each rank sends
its per-channel sum, sum of squares and element count, one ``all_reduce``
adds them up, and every rank derives the same global mean and variance.

The collective is an argument (default ``torch.distributed.all_reduce``), so
the grader can run your ranks as threads with an in-memory stand-in, and you
can run one rank by yourself with ``all_reduce=lambda t: None``.
"""

from collections.abc import Callable

import torch
import torch.distributed

AllReduce = Callable[[torch.Tensor], object]


def batch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-channel sum, sum of squares and element count of one rank's batch.

    Spec:
        - ``x`` is a floating-point tensor of shape ``(N, C, *spatial)``: batch
          first, channels second, then any number (0 included) of spatial dims,
          e.g. ``(N, C)``, ``(N, C, L)``, ``(N, C, H, W)``. ``C >= 1``; ``N`` may
          be 0 (this rank holds no samples), and so may a spatial size. ``x`` may be
          in any memory layout: channels-last (``x.to(memory_format=torch.channels_last)``),
          or a strided view of a larger tensor.
        - Return the tuple ``(sum, sum_sq, count)``:
            * ``sum[c]``: the sum of every element of channel ``c``, shape ``(C,)``;
            * ``sum_sq[c]``: the sum of their squares, shape ``(C,)``;
            * ``count``: how many elements each channel has, that is
              ``N * H * W * ...``, as a 0-dim tensor of ``x``'s dtype.
        - All three have ``x``'s dtype, float16 and bfloat16 included.

    Example:
        >>> x = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])   # N=3, C=2
        >>> batch_stats(x)
        (tensor([ 9., 12.]), tensor([35., 56.]), tensor(3.))

    How: reduce over every dim except dim 1, ``x.sum(dim=(0, 2, 3, ...))``;
    the count is ``x.numel() // C``.

    Pitfalls the notes warn about:
        - The count is elements per channel, not samples: with spatial dims a
          sample contributes ``H * W`` values to each channel.
        - ``x.transpose(0, 1).reshape(C, -1)`` fails on an empty batch (torch
          cannot infer ``-1`` from 0 elements); summing over a tuple of dims
          works for any size and any layout (``x.view(N, C, -1)`` refuses many
          non-contiguous ones).
    """
    raise NotImplementedError


def sync_batch_stats(
    x: torch.Tensor, all_reduce: AllReduce = torch.distributed.all_reduce,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Global per-channel mean and (biased) variance over every rank's batch.

    Spec:
        - Every rank calls this at the same time with its own ``x`` of shape
          ``(N_rank, C, *spatial)``; ``C``, the spatial shape and the dtype are
          the same on every rank, the batch sizes may differ and may be 0.
        - Return ``(mean, var)``, each of shape ``(C,)`` and ``x``'s dtype, equal
          on every rank: the mean and the *biased* variance (divide by the count,
          not count - 1, as batch norm does) of each channel over the
          concatenation of all ranks' batches.
        - Call ``all_reduce(t)`` exactly once, on one tensor that packs
          everything the ranks must add up. ``all_reduce`` sums ``t`` over the
          ranks *in place* and its return value means nothing.
        - If no rank holds any element (the global count is 0), raise
          ``ValueError`` on every rank, *after* the ``all_reduce``: a rank that
          skips the collective leaves the others waiting forever.

    Example (two ranks, C=1):
        rank 0: x = [[1.], [3.]]      rank 1: x = [[8.]]
        the concatenation is [1, 3, 8]: mean 4, var (9 + 1 + 16) / 3 = 8.667,
        so both ranks return (tensor([4.]), tensor([8.6667])).
        (The mean of the per-rank means, (2 + 8) / 2 = 5, is wrong.)

    How: ``batch_stats`` on the local batch; pack ``sum``, ``sum_sq`` and
    ``count`` into one tensor of length ``2 * C + 1`` (``torch.cat``), reduce
    it, unpack; ``mean = sum / count``, ``var = sum_sq / count - mean ** 2``.

    Pitfalls the notes warn about:
        - Average sums, never means: a mean of per-rank means weights a rank
          holding 1 sample like a rank holding 100.
        - ``torch.var`` defaults to the unbiased estimator; batch norm
          normalises with the biased one.
        - One collective, not one per statistic: every call is a network
          round trip, and ranks must all make the same calls.
        - ``E[x^2] - E[x]^2`` can come out a hair below 0 by rounding: clamp
          it at 0.
    """
    raise NotImplementedError


def sync_batch_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
    all_reduce: AllReduce = torch.distributed.all_reduce,
) -> torch.Tensor:
    """Batch-normalise this rank's slice with the statistics of the whole batch.

    Spec:
        - ``x``: this rank's ``(N_rank, C, *spatial)`` batch; ``weight`` and
          ``bias``: shape ``(C,)``, the same on every rank. Any of them may be
          non-contiguous (a channels-last batch, strided views).
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
        >>> sync_batch_norm(x, torch.ones(1), torch.zeros(1), eps=0.0,
        ...                 all_reduce=lambda t: None)
        tensor([[-1.],
                [ 1.]])

    How: reshape the ``(C,)`` statistics, weight and bias to
    ``(1, C, 1, ..., 1)`` (one 1 per spatial dim) so they broadcast along
    dim 1 of ``x``.

    Pitfalls the notes warn about:
        - ``eps`` goes inside the square root: ``sqrt(var + eps)``, not
          ``sqrt(var) + eps``.
        - A ``(C,)`` tensor broadcasts against the *last* dim of ``x``, not the
          channel dim: reshape it first.

    Forbidden: ``F.batch_norm``, ``torch.batch_norm`` and the ``nn.BatchNorm*``
    and ``nn.SyncBatchNorm`` modules; build it from ``sync_batch_stats``.
    """
    raise NotImplementedError
