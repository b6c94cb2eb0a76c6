"""Mistake: the mean and variance are computed under torch.no_grad(), as if they were running
statistics: the forward pass is right, but the gradient w.r.t. x misses their terms."""

import torch


def _dims(x, normalized_shape):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or len(shape) > x.dim() or tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise ValueError("normalized_shape must be the last dims of x")
    return tuple(range(-len(shape), 0))


def _affine(out, weight, bias, dtype):
    if weight is not None:
        out = out * weight.to(out.dtype)
    if bias is not None:
        out = out + bias.to(out.dtype)
    return out.to(dtype)


CAUGHT_BY = ("test_gradients_match_f_layer_norm",)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = _dims(x, normalized_shape)
    h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    with torch.no_grad():
        mean = h.mean(dims, keepdim=True)
        var = (h - mean).square().mean(dims, keepdim=True)
    return _affine((h - mean) / torch.sqrt(var + eps), weight, bias, x.dtype)
