"""Mistake: skips the 180-degree kernel flip, so the plain convolution correlates with the
kernel as stored: right shape, wrong numbers."""

import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_conv_transpose2d_stride_1", "test_matches_f_conv_transpose2d")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    n, c, h, w = x.shape
    kh, kw = weight.shape[-2:]
    spread = x.new_zeros(n, c, (h - 1) * sh + 1, (w - 1) * sw + 1)
    spread[:, :, ::sh, ::sw] = x
    padded = F.pad(spread, (kw - 1 - pw, kw - 1 - pw, kh - 1 - ph, kh - 1 - ph))
    return F.conv2d(padded, weight.transpose(0, 1), bias)
