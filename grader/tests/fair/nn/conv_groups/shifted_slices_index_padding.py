"""Right, written another way: no unfold. The padding is built by hand with index
arithmetic (reflect mirrors without the border, replicate clamps, circular wraps; zeros
writes into a zero tensor), and the convolution is a sum over the kernel's taps: for tap
(i, j), the strided slice of the padded input that tap sees, its channels split into
groups, contracted with that tap's weights.

Provenance: bingxinhu/openManyCore, generator/mapping_utils/ds_check.py (commit
ad6ecedcdde9d1eb1ad33f0d4323ecac70b2e7ce) checks a depthwise nn.Conv2d (groups=16) against
the sum over its nine taps of ``x[:, :, i * sh::sh, j * sw::sw] * weight[:, :, i, j]``,
cropped to the output's size. Rewritten here for any groups, dilation and padding.
"""

import torch

_KNOWN = ("zeros", "reflect", "replicate", "circular")


def _two(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def same_padding(kernel_size, dilation=1):
    total = dilation * (kernel_size - 1)
    after = (total + 1) // 2
    return total - after, after


def _positions(length, before, after, mode, device):
    """Which input index each padded position copies (mode other than zeros)."""
    p = torch.arange(-before, length + after, device=device)
    if mode == "replicate":
        return p.clamp(0, length - 1)
    if mode == "circular":
        return p % length
    p = p.abs()  # reflect: mirror at 0, then at length - 1
    return torch.where(p > length - 1, 2 * (length - 1) - p, p)


def _pad(x, top, bottom, left, right, mode):
    if mode == "zeros":
        out = x.new_zeros(*x.shape[:2], x.shape[2] + top + bottom, x.shape[3] + left + right)
        out[:, :, top:top + x.shape[2], left:left + x.shape[3]] = x
        return out
    rows = _positions(x.shape[2], top, bottom, mode, x.device)
    cols = _positions(x.shape[3], left, right, mode, x.device)
    return x[:, :, rows[:, None], cols]


def conv2d_groups(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, *, padding_mode):
    n, c_in, _, _ = x.shape
    c_out, cpg, kh, kw = weight.shape
    if groups * cpg != c_in or c_out % groups != 0:
        raise ValueError("weight and groups do not fit the channels")
    if padding_mode not in _KNOWN:
        raise ValueError("padding_mode")
    sh, sw = _two(stride)
    dh, dw = _two(dilation)
    if isinstance(padding, str):
        if padding not in ("same", "valid") or (padding == "same" and (sh, sw) != (1, 1)):
            raise ValueError("padding")
        (top, bottom), (left, right) = ((same_padding(kh, dh), same_padding(kw, dw)) if padding == "same"
                                        else ((0, 0), (0, 0)))
    else:
        ph, pw = _two(padding)
        top = bottom = ph
        left = right = pw
    padded = _pad(x, top, bottom, left, right, padding_mode)
    h_out = (padded.shape[2] - dh * (kh - 1) - 1) // sh + 1
    w_out = (padded.shape[3] - dw * (kw - 1) - 1) // sw + 1
    blocks = weight.reshape(groups, c_out // groups, cpg, kh, kw)
    out = x.new_zeros(n, groups, c_out // groups, h_out, w_out)
    for i in range(kh):
        for j in range(kw):
            seen = padded[:, :, i * dh:i * dh + (h_out - 1) * sh + 1:sh, j * dw:j * dw + (w_out - 1) * sw + 1:sw]
            out = out + torch.einsum("ngchw,goc->ngohw", seen.reshape(n, groups, cpg, h_out, w_out), blocks[..., i, j])
    out = out.reshape(n, c_out, h_out, w_out)
    return out if bias is None else out + bias.reshape(-1, 1, 1)
