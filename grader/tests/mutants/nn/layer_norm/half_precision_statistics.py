"""Mistake: computes mean and variance in the input's own float16/bfloat16 (no float32
upcast): the mean of a slice around 8 is off by far more than one rounding."""

from __future__ import annotations

from collections.abc import Sequence

import torch

CAUGHT_BY = ('test_half_precision_on_cpu',)

_HALF = (torch.float16, torch.bfloat16)


def layer_norm(x: torch.Tensor, normalized_shape: int | Sequence[int],
               weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
               eps: float = 1e-5) -> torch.Tensor:
    """Normalise over the trailing ``normalized_shape`` dims with the biased variance."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or len(shape) > x.dim() or tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise ValueError(f"normalized_shape {list(shape)} must be the last dims of an input "
                         f"of shape {list(x.shape)}")
    dims = tuple(range(-len(shape), 0))
    compute = x.dtype
    h = x.to(compute)
    mean = h.mean(dims, keepdim=True)
    var = (h - mean).square().mean(dims, keepdim=True)
    out = (h - mean) / torch.sqrt(var + eps)
    if weight is not None:
        out = out * weight.to(compute)
    if bias is not None:
        out = out + bias.to(compute)
    return out.to(x.dtype)
