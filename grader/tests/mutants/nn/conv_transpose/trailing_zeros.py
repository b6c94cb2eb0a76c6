"""Mistake: puts stride - 1 zeros after EVERY pixel, the last one included (size H * stride
instead of (H - 1) * stride + 1), so the output grows by stride - 1 rows and columns."""

import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_conv_transpose2d", "test_output_shape")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    n, c, h, w = x.shape
    kh, kw = weight.shape[-2:]
    spread = x.new_zeros(n, c, h * sh, w * sw)
    spread[:, :, ::sh, ::sw] = x
    padded = F.pad(spread, (kw - 1 - pw, kw - 1 - pw, kh - 1 - ph, kh - 1 - ph))
    return F.conv2d(padded, weight.flip(-2, -1).transpose(0, 1), bias)
