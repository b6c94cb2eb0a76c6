"""An independent correct layer_norm, written from the stub's docstring alone (never the
reference): the normalised dims flattened into one with reshape, var(correction=0), rsqrt."""

import torch


def _shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return [normalized_shape]
    return [int(d) for d in normalized_shape]


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    tail = _shape(normalized_shape)
    if not tail:
        raise ValueError("normalized_shape is empty")
    lead = x.dim() - len(tail)
    if lead < 0 or list(x.shape[lead:]) != tail:
        raise ValueError(f"x of shape {list(x.shape)} does not end in {tail}")
    compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    width = 1
    for d in tail:
        width *= d
    rows = x.to(compute).reshape(*x.shape[:lead], width)
    centred = rows - rows.mean(dim=-1, keepdim=True)
    scale = torch.rsqrt(centred.var(dim=-1, correction=0, keepdim=True) + eps)
    out = (centred * scale).reshape(x.shape)
    if weight is not None:
        out = out * weight.to(compute)
    if bias is not None:
        out = out + bias.to(compute)
    return out.to(x.dtype)
