"""Mistake: loops into a buffer made with torch.zeros(shape), which is float32 whatever the
input's dtype, so a float64 input gives a float32 (and less precise) result."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_corr2d_matches_f_conv2d", "test_conv2d_matches_f_conv2d_by_default")


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def corr2d(x, k):
    kh, kw = k.shape
    out = torch.zeros(x.shape[0] - kh + 1, x.shape[1] - kw + 1)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = (x[i:i + kh, j:j + kw] * k).sum()
    return out


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    x = F.pad(x, (pw, pw, ph, ph))
    h_out = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    w_out = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = torch.zeros(n, c_out, h_out, w_out)
    for i in range(h_out):
        for j in range(w_out):
            window = x[:, :, i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
            out[:, :, i, j] = torch.einsum("ncij,ocij->no", window, weight)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out
