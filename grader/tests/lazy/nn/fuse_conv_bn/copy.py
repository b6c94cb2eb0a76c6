"""Do-nothing: a copy of the conv (same settings and weights, a bias of zeros added), the
batch norm ignored."""

import torch
from torch import nn


def fuse_conv_bn(conv, bn):
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                      conv.padding, conv.dilation, conv.groups, True, conv.padding_mode,
                      device=conv.weight.device, dtype=conv.weight.dtype)
    with torch.no_grad():
        fused.weight.copy_(conv.weight)
        fused.bias.copy_(conv.bias if conv.bias is not None else torch.zeros_like(fused.bias))
    return fused
