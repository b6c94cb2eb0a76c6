"""Mistake: F.pad(x, (ph, ph, pw, pw)) pads W by the H padding and H by the W padding:
F.pad's tuple starts with the LAST dim (left, right, top, bottom)."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_conv2d_matches_f_conv2d_with_stride_padding_dilation",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def corr2d(x, k):
    kh, kw = k.shape
    return (x.unfold(0, kh, 1).unfold(1, kw, 1) * k).sum(dim=(-2, -1))


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    kh, kw = weight.shape[-2:]
    x = F.pad(x, (ph, ph, pw, pw))
    windows = x.unfold(2, dh * (kh - 1) + 1, sh).unfold(3, dw * (kw - 1) + 1, sw)[..., ::dh, ::dw]
    out = torch.einsum("nchwij,ocij->nohw", windows, weight)
    return out if bias is None else out + bias.view(1, -1, 1, 1)
