"""Do-nothing: zeros of the right shape and dtype."""

import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    (sh, sw), (ph, pw) = _pair(stride), _pair(padding)
    kh, kw = weight.shape[-2:]
    h = (x.shape[2] - 1) * sh - 2 * ph + kh
    w = (x.shape[3] - 1) * sw - 2 * pw + kw
    return torch.zeros(x.shape[0], weight.shape[1], h, w, dtype=x.dtype)
