"""Mistake: pads with zeros for max pooling too, so a window of negative values that
touches the padding returns 0 instead of its largest value."""

import torch.nn.functional as F

CAUGHT_BY = ("test_max_pool_matches_f_max_pool2d",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError("mode must be 'max' or 'avg'")
    kh, kw = _pair(kernel)
    sh, sw = _pair(kernel if stride is None else stride)
    ph, pw = _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError("padding is more than half the kernel")
    if x.shape[-2] + 2 * ph < kh or x.shape[-1] + 2 * pw < kw:
        raise ValueError("the window does not fit")
    windows = F.pad(x, (pw, pw, ph, ph)).unfold(2, kh, sh).unfold(3, kw, sw)
    if mode == "max":
        return windows.amax(dim=(-2, -1))
    return windows.mean(dim=(-2, -1))
