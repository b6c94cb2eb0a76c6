"""Mistake: takes the windows under torch.no_grad() (unfold only "indexes", so it seems
safe): the values are right, but the output is cut off from x, so no gradient reaches it."""

from __future__ import annotations

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_gradients_match_nn_conv2d',)

# nn.Conv2d's padding modes -> F.pad's names for them.
_F_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate", "circular": "circular"}


def _pair(value: int | tuple[int, int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays as it is."""
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def same_padding(kernel_size: int, dilation: int = 1) -> tuple[int, int]:
    """(before, after) of 'same' along one dim: the odd one out goes after."""
    total = dilation * (kernel_size - 1)
    return total // 2, total - total // 2


def _pad_amounts(padding: int | tuple[int, int] | str, kernel: tuple[int, int],
                 stride: tuple[int, int], dilation: tuple[int, int]) -> tuple[int, int, int, int]:
    """F.pad's (left, right, top, bottom) for nn.Conv2d's padding argument."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise ValueError(f"padding must be an int, a pair, 'same' or 'valid', got {padding!r}")
        if stride != (1, 1):
            raise ValueError(f"padding='same' needs stride 1, got stride {stride}")
        top, bottom = same_padding(kernel[0], dilation[0])
        left, right = same_padding(kernel[1], dilation[1])
        return (left, right, top, bottom)
    along_h, along_w = _pair(padding)
    return (along_w, along_w, along_h, along_h)


def conv2d_groups(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                  stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] | str = 0,
                  dilation: int | tuple[int, int] = 1, groups: int = 1, *,
                  padding_mode: str) -> torch.Tensor:
    """(N, C_in, H, W) with weight (C_out, C_in / groups, kh, kw) -> (N, C_out, H_out, W_out),
    padded as nn.Conv2d pads, from arguments in any memory layout."""
    n, c_in = x.shape[:2]
    c_out, per_group, kh, kw = weight.shape
    if per_group * groups != c_in:
        raise ValueError(f"weight {tuple(weight.shape)} with groups={groups} expects "
                         f"{per_group * groups} input channels, x has {c_in}")
    if c_out % groups:
        raise ValueError(f"groups={groups} must divide the {c_out} output channels")
    if padding_mode not in _F_PAD_MODES:
        raise ValueError(f"padding_mode must be one of {sorted(_F_PAD_MODES)}, got {padding_mode!r}")
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    amounts = _pad_amounts(padding, (kh, kw), (sh, sw), (dh, dw))
    padded = F.pad(x, amounts, mode=_F_PAD_MODES[padding_mode])
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1  # the dilated kernel's extent
    with torch.no_grad():
        windows = padded.unfold(2, span_h, sh).unfold(3, span_w, sw)[..., ::dh, ::dw]
    h_out, w_out = windows.shape[2:4]
    windows = windows.reshape(n, groups, per_group, h_out, w_out, kh, kw)
    blocks = weight.reshape(groups, c_out // groups, per_group, kh, kw)
    out = torch.einsum("ngchwij,gocij->ngohw", windows, blocks).reshape(n, c_out, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out
