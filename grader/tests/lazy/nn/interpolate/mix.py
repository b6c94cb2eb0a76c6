"""Mix: per function a do-nothing answer: the coordinates all 0 (pixel 0 for every output
pixel), nearest the input handed back, bilinear zeros of the right shape attached to x's
graph (so gradients "flow", all zero)."""

import torch


def source_coordinates(in_size, out_size, align_corners=False):
    return torch.zeros(out_size, dtype=torch.float64)


def resize_nearest(x, size):
    return x


def resize_bilinear(x, size, align_corners=False):
    out_h, out_w = (size, size) if isinstance(size, int) else size
    return x.new_zeros(*x.shape[:2], out_h, out_w) + 0 * x.sum()
