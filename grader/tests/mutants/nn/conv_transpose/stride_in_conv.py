"""Mistake: passes the stride on to the ordinary convolution instead of inserting zeros, so
a stride-2 layer shrinks its input like a conv instead of upsampling it."""

import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_conv_transpose2d", "test_output_shape")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    kh, kw = weight.shape[-2:]
    padded = F.pad(x, (kw - 1 - pw, kw - 1 - pw, kh - 1 - ph, kh - 1 - ph))
    return F.conv2d(padded, weight.flip(-2, -1).transpose(0, 1), bias, stride=(sh, sw))
