"""Mistake: accepts padding larger than half the kernel (PyTorch refuses it): windows
made only of padding then give -inf (max) or 0 (avg) instead of an error."""

import torch.nn.functional as F

CAUGHT_BY = ("test_padding_over_half_the_kernel_raises_value_error",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError("mode must be 'max' or 'avg'")
    kh, kw = _pair(kernel)
    sh, sw = _pair(kernel if stride is None else stride)
    ph, pw = _pair(padding)
    if x.shape[-2] + 2 * ph < kh or x.shape[-1] + 2 * pw < kw:
        raise ValueError("the window does not fit")
    fill = float("-inf") if mode == "max" else 0.0
    windows = F.pad(x, (pw, pw, ph, ph), value=fill).unfold(2, kh, sh).unfold(3, kw, sw)
    if mode == "max":
        return windows.amax(dim=(-2, -1))
    return windows.sum(dim=(-2, -1)) / (kh * kw)
