"""Do-nothing: zeros of the right shape and dtype for every function."""

import torch


def _pair(size):
    return (size, size) if isinstance(size, int) else tuple(size)


def source_coordinates(in_size, out_size, align_corners=False):
    return torch.zeros(out_size, dtype=torch.float64)


def resize_nearest(x, size):
    return x.new_zeros(*x.shape[:2], *_pair(size))


def resize_bilinear(x, size, align_corners=False):
    return x.new_zeros(*x.shape[:2], *_pair(size))
