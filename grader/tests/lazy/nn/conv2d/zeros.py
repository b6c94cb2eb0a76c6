"""Do-nothing: zeros of the right shape and dtype."""

import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def corr2d(x, k):
    return torch.zeros(x.shape[0] - k.shape[0] + 1, x.shape[1] - k.shape[1] + 1, dtype=x.dtype)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    kh, kw = weight.shape[-2:]
    h = (x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    w = (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return torch.zeros(x.shape[0], weight.shape[0], h, w, dtype=x.dtype)
