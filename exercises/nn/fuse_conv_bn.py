"""Fuse a BatchNorm2d into the Conv2d before it.

At inference time a BatchNorm layer is a fixed per-channel affine map: it uses
its running statistics, not the batch's. An affine map after a convolution is
itself a convolution, so deployment tools fold the two into one ``nn.Conv2d``
(one pass over memory instead of two). Here you write that fold.
"""

from __future__ import annotations

import torch
from torch import nn


def fuse_conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """Return a NEW ``nn.Conv2d`` whose output equals ``bn(conv(x))`` with ``bn``
    in eval mode.

    Spec:
        - In eval mode, for output channel ``o``:
          ``bn(y)[o] = (y[o] - running_mean[o]) / sqrt(running_var[o] + eps)
          * gamma[o] + beta[o]``, with ``gamma = bn.weight`` and
          ``beta = bn.bias`` (``gamma = 1`` and ``beta = 0`` when
          ``bn.affine`` is False, i.e. ``bn.weight is None``).
        - With ``scale = gamma / sqrt(running_var + eps)`` (one number per
          output channel):
          ``fused.weight = conv.weight * scale`` (scaling each OUTPUT channel,
          dim 0 of the weight) and
          ``fused.bias = (conv.bias - running_mean) * scale + beta``
          (``conv.bias`` counts as 0 when it is ``None``; the fused conv
          always has a bias).
        - The fused conv keeps every setting of ``conv``: ``in_channels``,
          ``out_channels``, ``kernel_size``, ``stride``, ``padding``,
          ``dilation``, ``groups``, ``padding_mode``; and the dtype (float16 and
          bfloat16 included) and device of ``conv.weight``.
        - Its weight and bias are new tensors: never ``conv``'s own (even when ``bn``
          changes nothing), so training one conv never changes the other.
        - ``conv.weight`` may be in any memory layout: a model converted with
          ``.to(memory_format=torch.channels_last)`` holds permuted conv weights,
          on which ``conv.weight.view(C_out, -1)`` raises (``reshape`` or
          broadcasting with ``scale.reshape(-1, 1, 1, 1)`` work).
        - Use the running statistics whatever mode ``bn`` is in (it may come
          in training mode).
        - Leave ``conv`` and ``bn`` untouched: same parameters, buffers and
          ``training`` flags after the call.

    Example:
        >>> conv, bn = nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1, eps=1.0)
        >>> with torch.no_grad():
        ...     _ = conv.weight.fill_(2.0), conv.bias.fill_(1.0)
        ...     _ = bn.running_mean.fill_(1.0), bn.running_var.fill_(3.0)
        ...     _ = bn.weight.fill_(4.0), bn.bias.fill_(0.5)
        >>> fused = fuse_conv_bn(conv, bn)
        >>> fused.weight.item(), fused.bias.item()  # scale = 4 / sqrt(3 + 1) = 2
        (4.0, 0.5)

    Pitfalls:
        - ``eps`` goes inside the square root, added to the variance.
        - The conv's own bias is shifted by the mean *before* scaling.
        - ``nn.Conv2d(...)`` makes float32 CPU weights: pass ``dtype=`` and
          ``device=`` from ``conv.weight``, and write the new values under
          ``torch.no_grad()`` (``fused.weight.copy_(...)``).
        - Never scale ``conv.weight`` in place, and never return ``conv``
          itself; do not call ``bn.eval()`` on the caller's module either.

    Forbidden: ``torch.nn.utils.fusion.fuse_conv_bn_eval`` and
    ``fuse_conv_bn_weights``, which do the whole fold for you. Compute
    ``scale`` yourself from the tensors above.
    """
    raise NotImplementedError
