"""Mistake: corr2d collects each output with ``.item()`` and rebuilds the map with
``torch.tensor``: right numbers and dtype, but cut off from x and k (no gradient)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_corr2d_gradients_match_f_conv2d',)


def pair(value: int | tuple[int, int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays as it is."""
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def corr2d(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Valid cross-correlation of one (H, W) map with one (kh, kw) kernel."""
    kh, kw = k.shape
    rows = [[(x[i:i + kh, j:j + kw] * k).sum().item() for j in range(x.shape[1] - kw + 1)]
            for i in range(x.shape[0] - kh + 1)]
    return torch.tensor(rows, dtype=x.dtype, device=x.device)


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
           dilation: int | tuple[int, int] = 1) -> torch.Tensor:
    """(N, C_in, H, W) with weight (C_out, C_in, kh, kw) -> (N, C_out, H_out, W_out)."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    kh, kw = weight.shape[-2:]
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1  # the dilated kernel's extent
    padded = F.pad(x, (pw, pw, ph, ph))
    windows = padded.unfold(2, span_h, sh).unfold(3, span_w, sw)  # (N, C, Ho, Wo, span_h, span_w)
    windows = windows[..., ::dh, ::dw]  # keep the taps the dilated kernel touches
    out = torch.einsum("nchwij,ocij->nohw", windows, weight)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out
