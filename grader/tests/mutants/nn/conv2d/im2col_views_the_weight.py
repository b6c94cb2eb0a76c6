"""Mistake: im2col with ``weight.view(C_out, -1)`` and a matrix product, which only works
for a contiguous weight: a transposed or sliced weight makes ``view`` raise."""

from __future__ import annotations

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_conv2d_matches_f_conv2d_by_default', 'test_conv2d_matches_f_conv2d_with_stride_padding_dilation')


def pair(value: int | tuple[int, int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays as it is."""
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def corr2d(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Valid cross-correlation of one (H, W) map with one (kh, kw) kernel."""
    kh, kw = k.shape
    windows = x.unfold(0, kh, 1).unfold(1, kw, 1)  # (H - kh + 1, W - kw + 1, kh, kw)
    return (windows * k).sum(dim=(-2, -1))


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
           dilation: int | tuple[int, int] = 1) -> torch.Tensor:
    """(N, C_in, H, W) with weight (C_out, C_in, kh, kw) -> (N, C_out, H_out, W_out)."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    kh, kw = weight.shape[-2:]
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1  # the dilated kernel's extent
    padded = F.pad(x, (pw, pw, ph, ph))
    h_out = (padded.shape[2] - span_h) // sh + 1
    w_out = (padded.shape[3] - span_w) // sw + 1
    cols = F.unfold(padded, (kh, kw), dilation=(dh, dw), stride=(sh, sw))  # (N, C*kh*kw, L)
    out = (weight.view(weight.shape[0], -1) @ cols).reshape(x.shape[0], -1, h_out, w_out)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out
