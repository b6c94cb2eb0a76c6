"""Mistake: the running buffers are updated in place with autograd on (no torch.no_grad()):
when x requires grad, running_mean and running_var join the graph (they require grad and
keep every training step's graph alive), though their values are right. d2l's hand-written
batch_norm (as copied in righterTY/d2l, demo7_5.py) computes its moving averages from the
graph's mean and var and hands them back as ``.data`` for this reason."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_the_buffers_are_updated_without_tracking_gradients',)


def _per_channel(t: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``t`` of shape (C,) shaped to broadcast over x: (1, C, 1, ..., 1)."""
    return t.reshape(1, -1, *([1] * (x.dim() - 2)))


def _affine(y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor | None,
            bias: torch.Tensor | None) -> torch.Tensor:
    if weight is not None:
        y = y * _per_channel(weight, x)
    if bias is not None:
        y = y + _per_channel(bias, x)
    return y


def batch_norm_train(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                     num_batches_tracked: torch.Tensor, weight: torch.Tensor | None = None,
                     bias: torch.Tensor | None = None, momentum: float | None = 0.1,
                     eps: float = 1e-5) -> torch.Tensor:
    """Normalise with the batch's biased statistics; fold the batch's mean and unbiased
    variance into the running buffers in place (a cumulative average when momentum is None)."""
    dims = [d for d in range(x.dim()) if d != 1]
    n = x.numel() // x.shape[1]
    if n < 2:
        raise ValueError(f"batch norm in training needs more than one value per channel, got "
                         f"input of shape {list(x.shape)}")
    mean = x.mean(dims)
    var = (x - _per_channel(mean, x)).square().mean(dims)
    y = (x - _per_channel(mean, x)) / torch.sqrt(_per_channel(var, x) + eps)
    num_batches_tracked.add_(1)  # the update is recorded by autograd: mean and var require grad
    factor = 1.0 / float(num_batches_tracked) if momentum is None else momentum
    running_mean.mul_(1 - factor).add_(factor * mean)
    running_var.mul_(1 - factor).add_(factor * var * (n / (n - 1)))
    return _affine(y, x, weight, bias)


def batch_norm_eval(x: torch.Tensor, running_mean: torch.Tensor, running_var: torch.Tensor,
                    weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                    eps: float = 1e-5) -> torch.Tensor:
    """Normalise with the running statistics; change nothing."""
    y = (x - _per_channel(running_mean, x)) / torch.sqrt(_per_channel(running_var, x) + eps)
    return _affine(y, x, weight, bias)
