"""Do-nothing: a new nn.Conv2d with the conv's settings, dtype and device, and zero weights and bias."""

import torch
from torch import nn


def fuse_conv_bn(conv, bn):
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                      conv.padding, conv.dilation, conv.groups, True, conv.padding_mode,
                      device=conv.weight.device, dtype=conv.weight.dtype)
    with torch.no_grad():
        fused.weight.zero_()
        fused.bias.zero_()
    return fused
