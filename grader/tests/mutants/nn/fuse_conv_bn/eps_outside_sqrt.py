"""Mistake: divides by sqrt(running_var) + eps instead of sqrt(running_var + eps)."""

import torch
from torch import nn

CAUGHT_BY = ("test_fused_output_equals_conv_then_bn_eval",)


def fuse_conv_bn(conv, bn):
    gamma = bn.weight.detach() if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias.detach() if bn.bias is not None else torch.zeros_like(bn.running_mean)
    bias = conv.bias.detach() if conv.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / (torch.sqrt(bn.running_var) + bn.eps)
    fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                      conv.padding, conv.dilation, conv.groups, True, conv.padding_mode,
                      device=conv.weight.device, dtype=conv.weight.dtype)
    with torch.no_grad():
        fused.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        fused.bias.copy_((bias - bn.running_mean) * scale + beta)
    return fused
