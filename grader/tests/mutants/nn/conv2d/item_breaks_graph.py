"""Mistake: fills the output with .item() values, so the numbers are right but the result
is cut off from x, weight and bias: no gradient can flow back and the layer cannot learn."""

import torch.nn.functional as F

CAUGHT_BY = ("test_conv2d_gradients_match_f_conv2d",)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def corr2d(x, k):
    kh, kw = k.shape
    out = x.new_zeros(x.shape[0] - kh + 1, x.shape[1] - kw + 1)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = (x[i:i + kh, j:j + kw] * k).sum().item()
    return out


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    x = F.pad(x, (pw, pw, ph, ph))
    h_out = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    w_out = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = x.new_zeros(n, c_out, h_out, w_out)
    for b in range(n):
        for o in range(c_out):
            for i in range(h_out):
                for j in range(w_out):
                    window = x[b, :, i * sh:i * sh + dh * (kh - 1) + 1:dh,
                               j * sw:j * sw + dw * (kw - 1) + 1:dw]
                    value = (window * weight[o]).sum()
                    if bias is not None:
                        value = value + bias[o]
                    out[b, o, i, j] = value.item()
    return out
