"""Mistake: calls the forbidden F.conv_transpose2d instead of building it from a plain
convolution."""

import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_conv_transpose2d_stride_1", "test_matches_f_conv_transpose2d")


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0):
    return F.conv_transpose2d(x, weight, bias, stride=stride, padding=padding)
