"""Mistake: im2col over ``x.view(N * C, 1, H, W)`` (every channel as a batch item), which
only works for a contiguous x: a transposed or sliced x makes ``view`` raise."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_max_pool_matches_f_max_pool2d', 'test_avg_pool_matches_f_avg_pool2d')


def _pair(value: int | tuple[int, int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def pool2d(x: torch.Tensor, kernel: int | tuple[int, int],
           stride: int | tuple[int, int] | None = None,
           padding: int | tuple[int, int] = 0, mode: str = "max") -> torch.Tensor:
    """Max or average pooling of (N, C, H, W), equal to F.max_pool2d / F.avg_pool2d."""
    if mode not in ("max", "avg"):
        raise ValueError(f"mode must be 'max' or 'avg', got {mode!r}")
    kh, kw = _pair(kernel)
    sh, sw = _pair(kernel if stride is None else stride)
    ph, pw = _pair(padding)
    if ph > kh // 2 or pw > kw // 2:
        raise ValueError(f"padding {(ph, pw)} is more than half the kernel {(kh, kw)}")
    height, width = x.shape[-2:]
    if height + 2 * ph < kh or width + 2 * pw < kw:
        raise ValueError(f"the {kh}x{kw} window does not fit the padded "
                         f"{height + 2 * ph}x{width + 2 * pw} input")
    fill = float("-inf") if mode == "max" else 0.0
    n, c = x.shape[:2]
    flat = F.pad(x.view(n * c, 1, height, width), (pw, pw, ph, ph), value=fill)
    h_out, w_out = (flat.shape[2] - kh) // sh + 1, (flat.shape[3] - kw) // sw + 1
    cols = F.unfold(flat, (kh, kw), stride=(sh, sw))  # (N * C, kh * kw, L)
    pooled = cols.amax(dim=1) if mode == "max" else cols.sum(dim=1) / (kh * kw)
    return pooled.reshape(n, c, h_out, w_out)
