"""Mistake: with align_corners=True computes (in - 1) / (out - 1) whatever the output
size: one output pixel divides by zero (ZeroDivisionError), where PyTorch reads pixel 0."""

import torch

CAUGHT_BY = ('test_source_coordinates_match_f_interpolate',)


def _pair(size):
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


def source_coordinates(in_size, out_size, align_corners=False):
    i = torch.arange(out_size, dtype=torch.float64)
    if align_corners:
        src = i * ((in_size - 1) / (out_size - 1))
    else:
        src = (i + 0.5) * (in_size / out_size) - 0.5
    return src.clamp(0, in_size - 1)


def resize_nearest(x, size):
    out_h, out_w = _pair(size)
    rows = torch.arange(out_h, device=x.device) * x.shape[-2] // out_h
    cols = torch.arange(out_w, device=x.device) * x.shape[-1] // out_w
    return x[:, :, rows[:, None], cols]


def _taps(in_size, out_size, align_corners, x):
    src = source_coordinates(in_size, out_size, align_corners).to(x.device)
    low = src.floor().long()
    return low, (low + 1).clamp(max=in_size - 1), (src - low).to(x.dtype)


def resize_bilinear(x, size, align_corners=False):
    out_h, out_w = _pair(size)
    top, bottom, t_h = _taps(x.shape[-2], out_h, align_corners, x)
    left, right, t_w = _taps(x.shape[-1], out_w, align_corners, x)
    rows = x[:, :, top, :] + (x[:, :, bottom, :] - x[:, :, top, :]) * t_h[:, None]
    return rows[..., left] + (rows[..., right] - rows[..., left]) * t_w
