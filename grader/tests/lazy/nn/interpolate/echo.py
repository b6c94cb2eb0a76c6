"""Do-nothing: hands the input back (x for the resizes, the output pixels' own indices for
the coordinates)."""

import torch


def source_coordinates(in_size, out_size, align_corners=False):
    return torch.arange(out_size, dtype=torch.float64)


def resize_nearest(x, size):
    return x


def resize_bilinear(x, size, align_corners=False):
    return x
