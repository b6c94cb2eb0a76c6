"""Reference solution: fold an eval-mode BatchNorm2d into the Conv2d before it."""

from __future__ import annotations

import torch
from torch import nn


def fuse_conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """A new Conv2d (with new parameters, in conv.weight's dtype) equal to ``bn(conv(x))`` with
    ``bn`` in eval mode; conv.weight in any layout."""
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
        fused.weight.copy_(weight * scale.reshape(-1, 1, 1, 1))
        fused.bias.copy_((bias - bn.running_mean) * scale + beta)
    return fused
