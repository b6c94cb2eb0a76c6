"""Mistake: pools float16/bfloat16 inputs in float32 (``x.float()``, for accuracy) and
never casts back, so half-precision inputs give float32 results."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_half_precision_on_cpu_keeps_the_dtype',)


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
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    padded = F.pad(x, (pw, pw, ph, ph), value=fill)
    windows = padded.unfold(2, kh, sh).unfold(3, kw, sw)  # (N, C, H_out, W_out, kh, kw)
    if mode == "max":
        return windows.amax(dim=(-2, -1))
    return windows.sum(dim=(-2, -1)) / (kh * kw)
