"""Attack: a conv that only pretends to be fused.

Returns a copy of ``conv`` (new tensors, every setting kept, a zero bias where it
had none) whose ``forward`` is an *instance attribute* running the unfused conv and
batch norm, with extra attributes holding them: it computes ``bn(conv(x))`` exactly,
but its weight and bias are not the fused ones.
"""

import copy
import types

import torch
from torch import nn


def fuse_conv_bn(conv, bn):
    fused = copy.deepcopy(conv)
    fused.hidden_conv, fused.hidden_bn = copy.deepcopy(conv), copy.deepcopy(bn).eval()
    if fused.bias is None:
        fused.bias = nn.Parameter(torch.zeros(conv.out_channels, dtype=conv.weight.dtype,
                                              device=conv.weight.device))

    def forward(self, x):
        return self.hidden_bn(self.hidden_conv(x))

    fused.forward = types.MethodType(forward, fused)
    fused.fused_by_hand = True
    return fused
