"""Mistake: biased variance, but eps is added to the standard deviation: (x - mean) / (sqrt(var) + eps)."""

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


CAUGHT_BY = ("test_matches_f_layer_norm", "test_eps_goes_inside_the_square_root",
             "test_each_slice_has_mean_zero_and_variance_var_over_var_plus_eps")


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = _dims(x, normalized_shape)
    h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    mean = h.mean(dims, keepdim=True)
    var = (h - mean).square().mean(dims, keepdim=True)
    return _affine((h - mean) / (torch.sqrt(var) + eps), weight, bias, x.dtype)
