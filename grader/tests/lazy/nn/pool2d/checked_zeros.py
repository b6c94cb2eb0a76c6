"""Do-nothing with the spec's checks (mode, padding over half the kernel, a window that
does not fit); otherwise zeros of the right shape, attached to x's graph."""

import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError("mode")
    (kh, kw), (ph, pw) = _pair(kernel), _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError("padding over half the kernel")
    if x.shape[2] + 2 * ph < kh or x.shape[3] + 2 * pw < kw:
        raise ValueError("window does not fit")
    sh, sw = (kh, kw) if stride is None else _pair(stride)
    h = (x.shape[2] + 2 * ph - kh) // sh + 1
    w = (x.shape[3] + 2 * pw - kw) // sw + 1
    return torch.zeros(x.shape[0], x.shape[1], h, w, dtype=x.dtype) + 0 * x.sum()
