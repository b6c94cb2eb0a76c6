"""Right, written another way: im2col per group. For each group, F.unfold turns its slice
of the padded input into columns (N, C_in / groups * kh * kw, L), the group's block of the
weight flattened to (C_out / groups, C_in / groups * kh * kw) multiplies them, and the
groups' outputs are concatenated along the channels. 'same' is split as timm splits its
padding (pad // 2 before, the rest after; for stride 1 the total is dilation * (k - 1)).

Provenance: quarrying/diyconv, diy_conv.py (commit 10d024d43e08a9126bce15e4469159650bffa883):
``_conv2d_by_im2col`` loops over the batch and the groups, takes input channels
``[g * C_in/groups, (g + 1) * C_in/groups)`` and filters ``[g * C_out/groups, (g + 1) *
C_out/groups)``, im2cols the one and multiplies by the other reshaped to
``(C_out/groups, -1)``; huggingface/pytorch-image-models, timm/layers/padding.py (commit
7479d451a6dfd8af27f941b8e82a7402461fae80): ``pad_same`` splits a total ``pad`` as
``pad // 2, pad - pad // 2``. Rewritten here with F.unfold and matmul over the whole batch.
"""

import torch
import torch.nn.functional as F

_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate", "circular": "circular"}


def _two(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def same_padding(kernel_size, dilation=1):
    pad = (kernel_size - 1) * dilation
    return pad // 2, pad - pad // 2


def conv2d_groups(x, weight, bias, stride=1, padding=0, dilation=1, groups=1, *, padding_mode):
    batch, in_channels = x.shape[:2]
    out_channels, in_per_group, kh, kw = weight.shape
    if in_channels % groups or in_channels // groups != in_per_group:
        raise ValueError("the weight's second dim must be C_in / groups")
    if out_channels % groups:
        raise ValueError("groups must divide the output channels")
    if padding_mode not in _MODES:
        raise ValueError(f"unknown padding_mode {padding_mode!r}")
    stride, dilation = _two(stride), _two(dilation)
    if padding == "same":
        if stride != (1, 1):
            raise ValueError("padding='same' is only for stride 1")
        pad_h = (kh - 1) * dilation[0]
        pad_w = (kw - 1) * dilation[1]
        pads = [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2]
    elif padding == "valid":
        pads = [0, 0, 0, 0]
    elif isinstance(padding, str):
        raise ValueError(f"unknown padding {padding!r}")
    else:
        ph, pw = _two(padding)
        pads = [pw, pw, ph, ph]
    padded = F.pad(x, pads, mode=_MODES[padding_mode])
    h_out = (padded.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    w_out = (padded.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out_per_group = out_channels // groups
    outputs = []
    for g in range(groups):
        part = padded[:, g * in_per_group:(g + 1) * in_per_group]
        columns = F.unfold(part, (kh, kw), dilation=dilation, stride=stride)  # (N, cpg * kh * kw, L)
        filters = weight[g * out_per_group:(g + 1) * out_per_group].reshape(out_per_group, -1)
        outputs.append((filters @ columns).reshape(batch, out_per_group, h_out, w_out))
    out = torch.cat(outputs, dim=1)
    if bias is not None:
        out = out + bias[None, :, None, None]
    return out
