"""Do-nothing: zeros of the right shape and dtype."""

import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    (kh, kw), (ph, pw) = _pair(kernel), _pair(padding)
    sh, sw = (kh, kw) if stride is None else _pair(stride)
    h = (x.shape[2] + 2 * ph - kh) // sh + 1
    w = (x.shape[3] + 2 * pw - kw) // sw + 1
    return torch.zeros(x.shape[0], x.shape[1], h, w, dtype=x.dtype)
