"""Mistake: clamps the neighbour's index at the border but not its weight. Along H, a
coordinate above the first row (-0.25: floor -1, weight 0.75) or past the last one keeps
its fractional weight while its index is moved to rows 0 and 1 (or the last two): the
border rows blend in a row they should not. Along W the index is clamped with the weight
set to 0, which is right at the left border and wrong at the right one (it reads the
second-last pixel alone). Right without aligned corners only where no coordinate leaves
[0, in - 1]: downsampling by 2 or more. A 1-pixel side reads out of range (in C, memory
past the image; here an IndexError, or pixel -1).

Provenance: OAID/Tengine, executor/operator/ref/kernel/resize/resize_fp32.c (commit
17f0e15cfc60152ba3d4198042c37a51eca36236): ``bilinear_resize_fp32`` computes
``fy = (j + 0.5) * scale_y - 0.5``, ``sy = floor(fy)``, ``fy -= sy``, then clamps ``sy`` to
``[0, h - 2]`` only; along x it sets ``sx = 0, fx = 0`` below 0 and ``fx = 0, sx = w - 2``
at ``w - 1`` and above. Rewritten here over index tensors for align_corners=False (the C
code has no aligned corners: that path is right here); its nearest mode
(``min(int(i * scale), h - 1)``) is the spec's and is kept.
"""

import torch

CAUGHT_BY = ("test_resize_bilinear_matches_f_interpolate",)


def _pair(size):
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


def source_coordinates(in_size, out_size, align_corners=False):
    i = torch.arange(out_size, dtype=torch.float64)
    if align_corners:
        src = i * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    else:
        src = (i + 0.5) * (in_size / out_size) - 0.5
    return src.clamp(0, in_size - 1)


def resize_nearest(x, size):
    out_h, out_w = _pair(size)
    rows = (torch.arange(out_h, device=x.device) * (x.shape[-2] / out_h)).long().clamp(max=x.shape[-2] - 1)
    cols = (torch.arange(out_w, device=x.device) * (x.shape[-1] / out_w)).long().clamp(max=x.shape[-1] - 1)
    return x[:, :, rows[:, None], cols]


def _rows_as_tengine(in_size, out_size, device):
    f = (torch.arange(out_size, dtype=torch.float64, device=device) + 0.5) * (in_size / out_size) - 0.5
    start = f.floor()
    frac = f - start
    start = start.long().clamp(max=in_size - 2).clamp(min=0)  # the index moves, its weight stays
    return start, start + 1, frac


def _cols_as_tengine(in_size, out_size, device):
    f = (torch.arange(out_size, dtype=torch.float64, device=device) + 0.5) * (in_size / out_size) - 0.5
    start = f.floor()
    frac = f - start
    start = start.long()
    frac = torch.where((start < 0) | (start >= in_size - 1), torch.zeros_like(frac), frac)
    start = torch.where(start < 0, torch.zeros_like(start), start)
    start = torch.where(start >= in_size - 1, torch.full_like(start, in_size - 2), start)
    return start, start + 1, frac


def _taps(in_size, out_size, align_corners, x):
    src = source_coordinates(in_size, out_size, align_corners).to(x.device)
    low = src.floor().long()
    return low, (low + 1).clamp(max=in_size - 1), (src - low).to(x.dtype)


def resize_bilinear(x, size, align_corners=False):
    out_h, out_w = _pair(size)
    if align_corners:
        top, bottom, t_h = _taps(x.shape[-2], out_h, True, x)
        left, right, t_w = _taps(x.shape[-1], out_w, True, x)
    else:
        top, bottom, t_h = _rows_as_tengine(x.shape[-2], out_h, x.device)
        left, right, t_w = _cols_as_tengine(x.shape[-1], out_w, x.device)
        t_h, t_w = t_h.to(x.dtype), t_w.to(x.dtype)
    rows = x[:, :, top, :] * (1 - t_h[:, None]) + x[:, :, bottom, :] * t_h[:, None]
    return rows[..., left] * (1 - t_w) + rows[..., right] * t_w
