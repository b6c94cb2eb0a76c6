"""Mistake: average pooling divides by the number of real (unpadded) elements in each
window, i.e. count_include_pad=False, where F.avg_pool2d's default divides by kh * kw."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_avg_pool_matches_f_avg_pool2d",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _windows(t, kh, kw, sh, sw, ph, pw, fill):
    return F.pad(t, (pw, pw, ph, ph), value=fill).unfold(2, kh, sh).unfold(3, kw, sw)


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
    if mode == "max":
        return _windows(x, kh, kw, sh, sw, ph, pw, float("-inf")).amax(dim=(-2, -1))
    total = _windows(x, kh, kw, sh, sw, ph, pw, 0.0).sum(dim=(-2, -1))
    real = _windows(torch.ones_like(x), kh, kw, sh, sw, ph, pw, 0.0).sum(dim=(-2, -1))
    return total / real
