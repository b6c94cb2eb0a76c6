"""An independent correct layer_norm, written from the stub's docstring alone (never the
reference): mean and biased variance over the normalised dims with keepdim."""

import torch


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if n == 0 or n > x.dim() or tuple(x.shape[-n:]) != normalized_shape:
        raise ValueError(f"normalized_shape {normalized_shape} does not fit {tuple(x.shape)}")
    dtype = x.dtype
    half = dtype in (torch.float16, torch.bfloat16)
    if half:
        x = x.float()
        weight = weight.float() if weight is not None else None
        bias = bias.float() if bias is not None else None
    dims = tuple(range(-n, 0))
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.to(dtype)
