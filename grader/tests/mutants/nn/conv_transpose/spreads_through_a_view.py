"""Mistake: inserts the zeros on ``x.view(N * C, H, W)``, which only works when batch and
channels can be merged in memory: a transposed or sliced x makes ``view`` raise."""

from __future__ import annotations

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_matches_f_conv_transpose2d_stride_1', 'test_matches_f_conv_transpose2d')


def pair(value: int | tuple[int, int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays as it is."""
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def insert_zeros(x: torch.Tensor, sh: int, sw: int) -> torch.Tensor:
    """Put ``s - 1`` zeros between neighbouring pixels (none after the last)."""
    n, c, h, w = x.shape
    flat = x.view(n * c, h, w)
    out = flat.new_zeros(n * c, (h - 1) * sh + 1, (w - 1) * sw + 1)
    out[:, ::sh, ::sw] = flat
    return out.view(n, c, *out.shape[1:])


def conv_transpose2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                     stride: int | tuple[int, int] = 1,
                     padding: int | tuple[int, int] = 0) -> torch.Tensor:
    """(N, C_in, H, W) with weight (C_in, C_out, kh, kw) -> (N, C_out, H_out, W_out)."""
    (sh, sw), (ph, pw) = pair(stride), pair(padding)
    kh, kw = weight.shape[-2:]
    spread = insert_zeros(x, sh, sw)
    padded = F.pad(spread, (kw - 1 - pw, kw - 1 - pw, kh - 1 - ph, kh - 1 - ph))
    kernel = weight.flip(-2, -1).transpose(0, 1)  # (C_out, C_in, kh, kw), rotated 180 degrees
    return F.conv2d(padded, kernel, bias)
