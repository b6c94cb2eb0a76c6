"""Mistake: the loops over window positions stop one window early
(range(0, H_padded - kh, stride) instead of range(0, H_padded - kh + 1, stride))."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_max_pool_matches_f_max_pool2d", "test_avg_pool_matches_f_avg_pool2d")


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
    padded = F.pad(x, (pw, pw, ph, ph), value=fill)
    rows = []
    for i in range(0, padded.shape[-2] - kh, sh):
        row = []
        for j in range(0, padded.shape[-1] - kw, sw):
            window = padded[..., i:i + kh, j:j + kw]
            if mode == "max":
                row.append(window.amax(dim=(-2, -1)))
            else:
                row.append(window.sum(dim=(-2, -1)) / (kh * kw))
        rows.append(torch.stack(row, dim=-1) if row else padded.new_empty(*x.shape[:2], 0))
    if not rows:
        return padded.new_empty(*x.shape[:2], 0, 0)
    return torch.stack(rows, dim=-2)
