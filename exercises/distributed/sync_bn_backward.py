"""Batch normalisation's backward pass by hand, then synchronised across ranks.

In training mode batch norm normalises each channel with the statistics of the
batch it is given. Per channel ``c``, over its ``n`` elements (every sample and
every spatial position):

    mean = x.mean(),  var = ((x - mean) ** 2).mean()  (biased),
    invstd = 1 / sqrt(var + eps),  x_hat = (x - mean) * invstd,
    y = weight * x_hat + bias.

Given ``grad_output`` (``dL/dy``, shaped like ``x``), the gradients are

    grad_bias   = sum(grad_output)
    grad_weight = sum(grad_output * x_hat)
    grad_input  = weight * invstd * (grad_output
                                     - sum(grad_output) / n
                                     - x_hat * sum(grad_output * x_hat) / n)

(sums over the channel's ``n`` elements). The two subtracted terms are there
because ``mean`` and ``var`` are functions of every element of the channel:
moving one ``x`` moves the mean (the first term) and the variance (the second)
that every other output was normalised with. Only in eval mode, where batch
norm uses its running buffers, are the statistics constants; there the
gradient is just ``weight * invstd * grad_output``.

With SyncBatchNorm every rank holds a slice of the batch, and the statistics
were those of the whole batch. The formula needs two per-channel sums over the
*whole* batch and its count ``n``: each rank computes its slice's sums, one
``all_reduce`` adds them up, and every rank applies the formula to its own
rows. That is what ``nn.SyncBatchNorm``'s backward does (``sum_dy`` and
``sum_dy_xmu``, the notes' "BatchNorm/SyncBN in depth", 3.2).

The collective is an argument, so the grader can run your ranks as threads with
an in-memory stand-in; with ``torch.distributed`` pass
``all_reduce=torch.distributed.all_reduce``, and on one rank by yourself
``all_reduce=lambda t: None``.
"""

from collections.abc import Callable

import torch

AllReduce = Callable[[torch.Tensor], object]


def batch_norm_backward(
    grad_output: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients of training-mode batch norm, by hand.

    Spec:
        - ``x`` is a floating-point tensor of shape ``(N, C, *spatial)`` (any number
          of spatial dims, 0 included) with at least 2 elements per channel, in any
          memory layout; ``grad_output`` has ``x``'s shape (and its own layout);
          ``weight`` has shape ``(C,)``. ``eps > 0``.
        - The forward was ``F.batch_norm(x, None, None, weight, bias,
          training=True, eps=eps)``: each channel normalised with the mean and the
          biased variance of its own elements in ``x``. (The bias does not enter
          any gradient, so it is not an argument.)
        - Return ``(grad_input, grad_weight, grad_bias)``: the gradients of
          ``(y * grad_output).sum()`` with respect to ``x`` (shaped like ``x``),
          ``weight`` and ``bias`` (each ``(C,)``), all in ``x``'s dtype; exactly
          what ``torch.autograd.grad`` gives through ``F.batch_norm``.
        - Leave the arguments unchanged.

    Example (one channel, N = 4: mean 3, var 3.5, invstd 0.5345):
        >>> x = torch.tensor([[1.], [2.], [3.], [6.]])
        >>> dy = torch.tensor([[1.], [0.], [0.], [0.]])
        >>> gx, gw, gb = batch_norm_backward(dy, x, torch.ones(1))
        >>> gx
        tensor([[ 0.2482],
                [-0.2100],
                [-0.1336],
                [ 0.0954]])
        >>> gw, gb                  # sum(dy * x_hat), sum(dy)
        (tensor([-1.0690]), tensor([1.]))

    How: reduce over every dim but dim 1 (``dim=(0, 2, 3, ...)``) and reshape the
    ``(C,)`` tensors to ``(1, C, 1, ..., 1)`` to broadcast them along dim 1.

    Pitfalls:
        - Treating the batch's mean and variance as constants: ``grad_output *
          weight * invstd`` is eval mode's gradient. Here it would give
          ``[[0.5345], [0], [0], [0]]`` above: the other three rows were
          normalised with a mean and a variance that ``x[0]`` moved.
        - The biased variance (divide by ``n``), as the forward used; ``x.var()``
          is unbiased by default.

    Forbidden: autograd (``torch.autograd.grad``, ``.backward()``, ``torch.func``)
    and torch's normalisation layers and kernels (``F.batch_norm`` and its
    kernels, ``torch.batch_norm_backward_*``, instance, group and layer norm):
    write the formula.
    """
    raise NotImplementedError


def sync_batch_norm_backward(
    grad_output: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
    invstd: torch.Tensor, all_reduce: AllReduce,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The backward of synchronised batch norm: this rank's gradients, with one ``all_reduce``.

    Spec:
        - Every rank calls this at the same time with its own slice of the batch:
          ``x`` of shape ``(N_rank, C, *spatial)`` (``N_rank`` may be 0) and its
          ``grad_output`` (same shape). ``weight``, ``mean`` and ``invstd`` have
          shape ``(C,)`` and are the same on every rank: ``mean`` and ``invstd =
          1 / sqrt(var + eps)`` are the statistics the forward used, those of the
          concatenation of every rank's ``x`` (as ``nn.SyncBatchNorm`` saves them).
          The whole batch has at least 2 elements per channel.
        - Call ``all_reduce(t)`` exactly once (it sums ``t`` over the ranks in
          place; its return value means nothing), on one tensor of length
          ``2 * C + 1`` that packs this rank's ``sum(grad_output)`` and
          ``sum(grad_output * x_hat)`` per channel (``x_hat = (x - mean) *
          invstd``) and its element count per channel, ``x.numel() // C``. A rank
          with no samples still takes part, with zero sums.
        - Return ``(grad_input, grad_weight, grad_bias)``: ``grad_input`` for this
          rank's rows (shaped like ``x``), and ``grad_weight`` and ``grad_bias`` of
          the whole batch (the reduced sums), equal on every rank. Together the
          ranks' answers are what ``batch_norm_backward`` gives for the
          concatenated batch and ``grad_output``.

    Example (two ranks, the batch of ``batch_norm_backward``'s example split in two):
        rank 0: x = [[1.], [2.]], dy = [[1.], [0.]]
        rank 1: x = [[3.], [6.]], dy = [[0.], [0.]]
        mean = [3.], invstd = [0.5345] on both. Rank 0 packs [1, -1.0690, 2],
        rank 1 packs [0, 0, 2]; both reduce to [1, -1.0690, 4], so n = 4, and
        rank 0 returns grad_input [[0.2482], [-0.2100]], rank 1
        [[-0.1336], [0.0954]], both grad_weight [-1.0690] and grad_bias [1.].

    Pitfalls:
        - Dividing by the local count (2 on each rank above): the means in the
          formula are over the whole batch. The notes say it: average by the total
          size, ``count_tensor.sum()`` (BatchNorm/SyncBN in depth, 3.2).
        - Local sums: without the ``all_reduce`` each rank differentiates as if
          its slice were the whole batch.
        - Two collectives for the two sums: the notes' own code does this (3.2,
          two ``all_reduce`` calls); one packed tensor makes one round trip.
        - Treating the mean and variance as constants, as in ``batch_norm_backward``.
        - ``nn.SyncBatchNorm`` returns each rank's own share of ``grad_weight`` and
          ``grad_bias`` and leaves DDP's gradient all-reduce to add them; here the
          sums you reduce anyway are the whole batch's, so return those.

    Forbidden: as in ``batch_norm_backward``.
    """
    raise NotImplementedError
