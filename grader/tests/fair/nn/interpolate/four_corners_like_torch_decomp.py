"""Right, written another way: the nearest indices computed as torch's own decomposition
computes them (the output index times a float32 scale, truncated), and bilinear as the four
corner pixels gathered at once and blended along W, then along H, with the weights clamped
to [0, 1] instead of the coordinate to [0, in - 1] at the top. The spec's sizes (up to 25)
make the float32 scale give floor(i * in / out) exactly.

Provenance: pytorch/pytorch, torch/_decomp/decompositions.py (commit
dec01e4c6f717287e3b0f88121bfcd677924bb0f): ``_compute_upsample_nearest_indices`` (``scale =
isize / osize``, ``arange(osize, dtype=float32) * scale`` cast to int64) and
``_upsample_linear`` (``x = source_index.clamp(min=0)``, ``x0 = int(x)``, ``x1 = min(x0 + 1,
isize - 1)``, ``alpha = (x - x0).clamp(0, 1)``, ``v1 + (v2 - v1) * alpha`` over every
corner). Rewritten here in plain indexing (no torch._decomp, no aten._unsafe_index).
"""

import torch


def source_coordinates(in_size, out_size, align_corners=False):
    out = torch.empty(out_size, dtype=torch.float64)
    for i in range(out_size):
        if align_corners:
            position = 0.0 if out_size == 1 else i * (in_size - 1) / (out_size - 1)
        else:
            position = (i + 0.5) * in_size / out_size - 0.5
        out[i] = min(max(position, 0.0), in_size - 1)
    return out


def _size(size):
    if isinstance(size, int):
        return size, size
    return int(size[0]), int(size[1])


def resize_nearest(x, size):
    out_h, out_w = _size(size)
    indices = []
    for in_size, out_size in ((x.shape[2], out_h), (x.shape[3], out_w)):
        scale = in_size / out_size
        indices.append((torch.arange(out_size, dtype=torch.float32, device=x.device) * scale).to(torch.int64))
    rows, cols = indices
    return x[:, :, rows.unsqueeze(-1), cols]


def _corners(in_size, out_size, align_corners, device):
    i = torch.arange(out_size, device=device, dtype=torch.float64)
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        source = i * scale
    else:
        source = (i + 0.5) * (in_size / out_size) - 0.5
    source = source.clamp(min=0.0)
    low = source.to(torch.int64)
    high = (low + 1).clamp(max=in_size - 1)
    return low, high, (source - low).clamp(0.0, 1.0)


def resize_bilinear(x, size, align_corners=False):
    out_h, out_w = _size(size)
    y0, y1, alpha_h = _corners(x.shape[2], out_h, align_corners, x.device)
    x0, x1, alpha_w = _corners(x.shape[3], out_w, align_corners, x.device)
    alpha_h, alpha_w = alpha_h.to(x.dtype).unsqueeze(-1), alpha_w.to(x.dtype)
    y0, y1 = y0.unsqueeze(-1), y1.unsqueeze(-1)
    corners = [x[:, :, y, c] for y in (y0, y1) for c in (x0, x1)]  # (y0,x0) (y0,x1) (y1,x0) (y1,x1)
    top = corners[0] + (corners[1] - corners[0]) * alpha_w
    bottom = corners[2] + (corners[3] - corners[2]) * alpha_w
    return top + (bottom - top) * alpha_h
