"""Mistake: a bilinear resize that is right in the middle but (1) returns ``src.copy()``
when the size does not change, which a tensor does not have (AttributeError), (2) divides
by ``dst - 1`` with aligned corners, so one output pixel raises ZeroDivisionError, and (3)
computes its coordinates from an int64 ``arange`` times a Python float, which is float32:
the weights of a float64 image are rounded to float32.

Provenance: Ascetics/LaneSegmentation, utils/bilinear_interplate.py (commit
1dd0247606f55745f7c3bc0130b380df1c50340a): ``bilinear_interpolate(src, dst_size,
align_corners=False)``, tested there against ``F.interpolate`` on one 3x3 image. Its maths
is the spec's: ``float(src_h) / dst_h * (hd + 0.5) - 0.5`` (or ``(src_h - 1) / (dst_h - 1)
* hd``), clamped to ``[0, src_h - 1]``, the lower neighbour clamped to ``[0, src_h - 2]``.
Rewritten here in the drill's signature; the other two functions are right.
"""

import torch

CAUGHT_BY = ("test_resizing_to_the_same_size_gives_a_new_tensor_equal_to_x",
             "test_resize_bilinear_matches_f_interpolate")


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
    src_h, src_w = x.shape[-2:]
    dst_h, dst_w = _pair(size)
    if src_h == dst_h and src_w == dst_w:
        return x.copy()
    hd, wd = torch.arange(0, dst_h), torch.arange(0, dst_w)
    if align_corners:
        h = float(src_h - 1) / (dst_h - 1) * hd
        w = float(src_w - 1) / (dst_w - 1) * wd
    else:
        h = float(src_h) / dst_h * (hd + 0.5) - 0.5
        w = float(src_w) / dst_w * (wd + 0.5) - 0.5
    h = torch.clamp(h, 0, src_h - 1).view(dst_h, 1).repeat(1, dst_w)
    w = torch.clamp(w, 0, src_w - 1).view(1, dst_w).repeat(dst_h, 1)
    h0 = torch.clamp(torch.floor(h), 0, src_h - 2).long()
    w0 = torch.clamp(torch.floor(w), 0, src_w - 2).long()
    h1, w1 = h0 + 1, w0 + 1
    r0 = (w1 - w) * x[..., h0, w0] + (w - w0) * x[..., h0, w1]
    r1 = (w1 - w) * x[..., h1, w0] + (w - w0) * x[..., h1, w1]
    return (h1 - h) * r0 + (h - h0) * r1
