"""Batch normalisation by hand, with its running statistics.

BatchNorm behaves differently in training and in evaluation. In training it
normalises every channel with the mean and variance of the current batch, and
folds those statistics into two buffers, ``running_mean`` and ``running_var``.
In evaluation (``model.eval()``) it normalises with the buffers instead, so that
one sample's output does not depend on the rest of its batch. Write both
forwards, equal to ``torch.nn.functional.batch_norm`` with ``training=True`` and
``training=False``, and the buffer updates ``nn.BatchNorm2d`` makes.
"""

from __future__ import annotations

import torch


def batch_norm_train(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                     num_batches_tracked: torch.Tensor, weight: torch.Tensor | None = None,
                     bias: torch.Tensor | None = None, momentum: float | None = 0.1,
                     eps: float = 1e-5) -> torch.Tensor:
    """The training forward: normalise with the batch, update the buffers in place.

    Shapes:
        ``x`` is ``(N, C)``, ``(N, C, L)`` or ``(N, C, H, W)``: channel dim 1, and
        the statistics of a channel are taken over EVERY other dim (the batch and
        the spatial positions), ``n = x.numel() // C`` values per channel.
        ``running_mean``, ``running_var``, ``weight`` and ``bias`` are ``(C,)``;
        ``num_batches_tracked`` is a 0-d int64 tensor (a counter). The result has
        ``x``'s shape and dtype.

    Spec, per channel:
        1. ``mean`` and the BIASED variance ``var = mean((x - mean) ** 2)``
           (divided by n) of the batch.
        2. ``y = (x - mean) / sqrt(var + eps)``, then ``y * weight + bias`` (each
           only if given).
        3. In place, without tracking gradients (``torch.no_grad()``):
           ``num_batches_tracked += 1``; then with a factor ``f = momentum``
           (or, when ``momentum is None``, ``f = 1 / num_batches_tracked``, the
           counter already incremented)
           ``running_mean = (1 - f) * running_mean + f * mean`` and
           ``running_var = (1 - f) * running_var + f * var_unbiased``, where
           ``var_unbiased = var * n / (n - 1)``.
        - Raise ``ValueError`` when a channel has fewer than 2 values (n < 2):
          the unbiased variance divides by n - 1.
        - Leave ``x``, ``weight`` and ``bias`` alone; keep the output
          differentiable with respect to them (the gradient flows through the
          batch's mean and variance too).

    Example (one channel, N = 4, fresh buffers mean 0, var 1):
        >>> x = torch.tensor([[1.], [2.], [3.], [6.]])      # mean 3, biased var 3.5
        >>> rm, rv, nbt = torch.zeros(1), torch.ones(1), torch.tensor(0)
        >>> batch_norm_train(x, rm, rv, nbt)
        tensor([[-1.0690], [-0.5345], [ 0.0000], [ 1.6036]])
        >>> rm, rv, nbt                        # 0.9 * 0 + 0.1 * 3; 0.9 * 1 + 0.1 * 14/3
        (tensor([0.3000]), tensor([1.3667]), tensor(1))

    Pitfall the notes warn about:
        - ``momentum=None`` is not "no update": it is a cumulative average, every
          batch so far weighted equally (the first batch replaces the initial
          buffers entirely). The SyncBatchNorm code the notes quote says so.

    Pitfalls:
        - Two variances: the normalisation uses the BIASED one (n), the running
          buffer gets the UNBIASED one (n - 1). ``x.var()`` is unbiased by default.
        - ``momentum`` weighs the NEW batch: ``(1 - momentum) * running + momentum
          * batch``. Keras (and the usual "exponential moving average" wording) call
          ``1 - momentum`` momentum.
        - Update the buffers in place (``mul_``, ``add_``, ``copy_``): rebinding the
          name ``running_mean = ...`` changes nothing the caller sees.

    Forbidden: ``F.batch_norm``, ``torch.batch_norm``, ``nn.BatchNorm1d/2d/3d`` and
    the other batch-norm kernels: use ``mean``, a variance and ``torch.sqrt``.
    """
    raise NotImplementedError


def batch_norm_eval(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                    weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                    eps: float = 1e-5) -> torch.Tensor:
    """The evaluation forward: normalise with the running statistics.

    Shapes as in ``batch_norm_train``; any batch size works here, even 1.

    Spec: ``y = (x - running_mean) / sqrt(running_var + eps)`` per channel (the
    buffers broadcast over dim 1), then ``y * weight + bias`` (each only if
    given). Nothing changes: not the buffers, not ``x``.

    Example (the buffers from the example above):
        >>> batch_norm_eval(torch.tensor([[3.]]), torch.tensor([0.3]), torch.tensor([1.3667]))
        tensor([[2.3095]])

    Pitfall: normalising with the batch's own statistics here (a sample of one
    would become all zeros); forgetting that the buffers are per channel, dim 1,
    not per last dim.

    Forbidden: as in ``batch_norm_train``.
    """
    raise NotImplementedError
