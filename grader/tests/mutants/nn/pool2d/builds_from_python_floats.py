"""Mistake: collects each window's value with .item() and builds a new tensor from the
Python numbers: the values are right, but the result is cut off from x's graph."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_gradients_match_torch",)


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
    fill = float("-inf") if mode == "max" else 0.0
    windows = F.pad(x, (pw, pw, ph, ph), value=fill).unfold(2, kh, sh).unfold(3, kw, sw)
    n, c, h_out, w_out = windows.shape[:4]
    values = [[[[windows[a, b, i, j].max().item() if mode == "max"
                 else windows[a, b, i, j].sum().item() / (kh * kw)
                 for j in range(w_out)] for i in range(h_out)] for b in range(c)] for a in range(n)]
    return torch.tensor(values, dtype=x.dtype, device=x.device).reshape(n, c, h_out, w_out)
