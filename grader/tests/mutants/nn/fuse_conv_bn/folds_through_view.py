"""Mistake: scales the weight as ``conv.weight.view(C_out, -1) * scale[:, None]``, which
raises on a channels_last (or otherwise permuted or sliced) conv weight."""

from __future__ import annotations

import torch
from torch import nn

CAUGHT_BY = ('test_fused_output_equals_conv_then_bn_eval',)


def fuse_conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """A new Conv2d equal to ``bn(conv(x))`` with ``bn`` in eval mode."""
    weight = conv.weight.detach()
    gamma = bn.weight.detach() if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias.detach() if bn.bias is not None else torch.zeros_like(bn.running_mean)
    bias = conv.bias.detach() if conv.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                      padding=conv.padding, dilation=conv.dilation, groups=conv.groups,
                      bias=True, padding_mode=conv.padding_mode,
                      device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        rows = weight.view(weight.shape[0], -1) * scale[:, None]
        fused.weight.copy_(rows.view(weight.shape))
        fused.bias.copy_((bias - bn.running_mean) * scale + beta)
    return fused
