"""Do-nothing: zeros of the right shape and dtype (and (0, 0) for same_padding)."""

import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def same_padding(kernel_size, dilation=1):
    return (0, 0)


def conv2d_groups(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, *, padding_mode):
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    kh, kw = weight.shape[-2:]
    if padding == "same":
        h, w = x.shape[-2:]
    else:
        ph, pw = (0, 0) if padding == "valid" else _pair(padding)
        h = (x.shape[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        w = (x.shape[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return torch.zeros(x.shape[0], weight.shape[0], h, w, dtype=x.dtype)
