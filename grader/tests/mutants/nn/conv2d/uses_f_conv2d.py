"""Mistake: calls the forbidden F.conv2d instead of sliding the kernel itself."""

import torch.nn.functional as F

CAUGHT_BY = ("test_corr2d_matches_f_conv2d", "test_conv2d_matches_f_conv2d_by_default",
             "test_conv2d_matches_f_conv2d_with_stride_padding_dilation")


def corr2d(x, k):
    return F.conv2d(x[None, None], k[None, None])[0, 0]


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    return F.conv2d(x, weight, bias, stride=stride, padding=padding, dilation=dilation)
