"""Mistake: flips the kernel (the textbook convolution), where deep learning's convolution,
F.conv2d included, is a cross-correlation with the kernel as it is."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_corr2d_matches_f_conv2d", "test_conv2d_matches_f_conv2d_by_default")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def corr2d(x, k):
    k = k.flip(0, 1)
    kh, kw = k.shape
    return (x.unfold(0, kh, 1).unfold(1, kw, 1) * k).sum(dim=(-2, -1))


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    weight = weight.flip(-2, -1)
    kh, kw = weight.shape[-2:]
    x = F.pad(x, (pw, pw, ph, ph))
    windows = x.unfold(2, dh * (kh - 1) + 1, sh).unfold(3, dw * (kw - 1) + 1, sw)[..., ::dh, ::dw]
    out = torch.einsum("nchwij,ocij->nohw", windows, weight)
    return out if bias is None else out + bias.view(1, -1, 1, 1)
