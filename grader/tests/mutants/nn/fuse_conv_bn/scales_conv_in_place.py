"""Mistake: folds the scale into the caller's conv in place and returns that conv, so the
original network's conv silently changes (and is not a new module)."""

import torch
from torch import nn

CAUGHT_BY = ("test_inputs_untouched", "test_returns_a_new_conv2d_with_the_same_settings")


def fuse_conv_bn(conv, bn):
    gamma = bn.weight.detach() if bn.weight is not None else torch.ones_like(bn.running_var)
    beta = bn.bias.detach() if bn.bias is not None else torch.zeros_like(bn.running_mean)
    bias = conv.bias.detach().clone() if conv.bias is not None else torch.zeros_like(bn.running_mean)
    scale = gamma / torch.sqrt(bn.running_var + bn.eps)
    with torch.no_grad():
        conv.weight.mul_(scale.reshape(-1, 1, 1, 1))
        conv.bias = nn.Parameter((bias - bn.running_mean) * scale + beta)
    return conv
