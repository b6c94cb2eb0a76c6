"""Mistake: places the output pixels with linspace(0, in - 1, out) whatever align_corners
says, so every resize lines up the corner pixels' centres (align_corners=True) and the
default align_corners=False, with its half-pixel offset, is never done; the linspace is
float32 too, so even the aligned resize of a float64 image is blurred at ~1e-7.

Provenance: JVISERASS/ejercicios-CVII, src/upsampling/bilinear_interpolation.py (commit
47071a10948c50e7d7b416ddedd80bcbde7cc65d): ``bilinear_interpolation(x, size)`` takes the
grid from ``torch.linspace(0, H - 1, H_out)`` (and the same along W), floors it, clamps the
upper neighbour and blends the four corners. Rewritten here in the drill's signature; the
other two functions are right.
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
    rows = torch.arange(out_h, device=x.device) * x.shape[-2] // out_h
    cols = torch.arange(out_w, device=x.device) * x.shape[-1] // out_w
    return x[:, :, rows[:, None], cols]


def resize_bilinear(x, size, align_corners=False):
    height, width = x.shape[-2:]
    out_h, out_w = _pair(size)
    ys = torch.linspace(0, height - 1, out_h, device=x.device)  # the grid, corner to corner
    xs = torch.linspace(0, width - 1, out_w, device=x.device)
    y0, x0 = ys.floor().long(), xs.floor().long()
    y1, x1 = (y0 + 1).clamp(max=height - 1), (x0 + 1).clamp(max=width - 1)
    wy, wx = (ys - y0).view(-1, 1), (xs - x0).view(1, -1)
    top_left, top_right = x[:, :, y0[:, None], x0], x[:, :, y0[:, None], x1]
    bottom_left, bottom_right = x[:, :, y1[:, None], x0], x[:, :, y1[:, None], x1]
    return ((1 - wy) * (1 - wx) * top_left + (1 - wy) * wx * top_right
            + wy * (1 - wx) * bottom_left + wy * wx * bottom_right)
