"""Mistake: stride=None is taken as 1 (every window position) instead of the kernel size."""

import torch.nn.functional as F

CAUGHT_BY = ("test_stride_defaults_to_kernel",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError("mode must be 'max' or 'avg'")
    kh, kw = _pair(kernel)
    sh, sw = _pair(1 if stride is None else stride)
    ph, pw = _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError("padding is more than half the kernel")
    if x.shape[-2] + 2 * ph < kh or x.shape[-1] + 2 * pw < kw:
        raise ValueError("the window does not fit")
    fill = float("-inf") if mode == "max" else 0.0
    windows = F.pad(x, (pw, pw, ph, ph), value=fill).unfold(2, kh, sh).unfold(3, kw, sw)
    if mode == "max":
        return windows.amax(dim=(-2, -1))
    return windows.sum(dim=(-2, -1)) / (kh * kw)
