"""Mistake: normalized_shape is only used for its length; a shape that is not the last dims of x
is accepted silently instead of raising ValueError."""

import torch


def _affine(out, weight, bias, dtype):
    if weight is not None:
        out = out * weight.to(out.dtype)
    if bias is not None:
        out = out + bias.to(out.dtype)
    return out.to(dtype)


CAUGHT_BY = ("test_mismatched_normalized_shape_raises_value_error",)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    count = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    dims = tuple(range(-max(count, 1), 0))
    h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    mean = h.mean(dims, keepdim=True)
    var = (h - mean).square().mean(dims, keepdim=True)
    return _affine((h - mean) / torch.sqrt(var + eps), weight, bias, x.dtype)
