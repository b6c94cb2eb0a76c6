"""Reference solution: where each output pixel reads, and nearest and bilinear resizing,
equal to ``F.interpolate``."""

from __future__ import annotations

import torch


def _pair(size: int | tuple[int, int]) -> tuple[int, int]:
    """``4`` -> ``(4, 4)``; a pair stays as it is."""
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


def source_coordinates(in_size: int, out_size: int, align_corners: bool = False) -> torch.Tensor:
    """float64 ``(out_size,)``: the input position each output pixel reads, in [0, in_size - 1]."""
    i = torch.arange(out_size, dtype=torch.float64)
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = i * scale
    else:  # pixel centres at i + 0.5 line up
        src = (i + 0.5) * (in_size / out_size) - 0.5
    return src.clamp(0, in_size - 1)


def _nearest(in_size: int, out_size: int, device: torch.device) -> torch.Tensor:
    """floor(i * in / out) in exact integer arithmetic (always below in_size)."""
    return torch.arange(out_size, device=device) * in_size // out_size


def resize_nearest(x: torch.Tensor, size: int | tuple[int, int]) -> torch.Tensor:
    """(N, C, H, W) -> (N, C, H_out, W_out), each output pixel a copy of the nearest one."""
    out_h, out_w = _pair(size)
    rows = _nearest(x.shape[-2], out_h, x.device)
    cols = _nearest(x.shape[-1], out_w, x.device)
    return x[:, :, rows[:, None], cols]


def _taps(in_size: int, out_size: int, align_corners: bool,
          x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The two neighbours each output pixel blends along one axis, and the weight of the second."""
    src = source_coordinates(in_size, out_size, align_corners).to(x.device)
    low = src.floor().long()
    high = (low + 1).clamp(max=in_size - 1)
    return low, high, (src - low).to(x.dtype)


def resize_bilinear(x: torch.Tensor, size: int | tuple[int, int],
                    align_corners: bool = False) -> torch.Tensor:
    """(N, C, H, W) -> (N, C, H_out, W_out): linear along H, then along W."""
    out_h, out_w = _pair(size)
    top, bottom, t_h = _taps(x.shape[-2], out_h, align_corners, x)
    left, right, t_w = _taps(x.shape[-1], out_w, align_corners, x)
    upper, lower = x[:, :, top, :], x[:, :, bottom, :]
    rows = upper + (lower - upper) * t_h[:, None]
    first, second = rows[..., left], rows[..., right]
    return first + (second - first) * t_w
