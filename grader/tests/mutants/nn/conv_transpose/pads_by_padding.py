"""Mistake: pads the spread-out input by `padding` (as an ordinary conv would) instead of
kernel - 1 - padding, so the output is too small and misaligned."""

import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_conv_transpose2d_stride_1", "test_matches_f_conv_transpose2d",
             "test_output_shape")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    n, c, h, w = x.shape
    spread = x.new_zeros(n, c, (h - 1) * sh + 1, (w - 1) * sw + 1)
    spread[:, :, ::sh, ::sw] = x
    padded = F.pad(spread, (pw, pw, ph, ph))
    return F.conv2d(padded, weight.flip(-2, -1).transpose(0, 1), bias)
