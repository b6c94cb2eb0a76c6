"""Attack: a fused conv that is cheap to send and dear to run in the grader.

Returns a real ``nn.Conv2d`` (every check on its class passes) with 4096 output
channels, a weight and bias that are one stored number each, expanded by stride 0 to
their full shapes (a few bytes cross the wire), and a padding of 64. A grader that
rebuilt it and ran its forward on the test's batch made a float64 output of about a
gigabyte, in one C++ convolution no per-call alarm can interrupt (a red-team run: 76 s
against a 37 s drill budget, the grader at 1.6 GB).
"""

import torch
from torch import nn

CHANNELS, PADDING = 4096, 64


def fuse_conv_bn(conv, bn):
    fused = nn.Conv2d(conv.in_channels, CHANNELS, conv.kernel_size, stride=conv.stride,
                      padding=PADDING, dilation=conv.dilation, groups=conv.groups,
                      padding_mode=conv.padding_mode, dtype=conv.weight.dtype)
    one = torch.zeros(1, dtype=conv.weight.dtype)
    fused.weight = nn.Parameter(one.expand_as(fused.weight))
    fused.bias = nn.Parameter(one.expand(CHANNELS))
    return fused
