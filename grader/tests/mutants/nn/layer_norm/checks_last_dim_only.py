"""Mistake: checks only the number of dims and the LAST size of normalized_shape against x,
so a normalized_shape that differs in an earlier dim is accepted."""

from __future__ import annotations

from collections.abc import Sequence

import torch

CAUGHT_BY = ('test_mismatched_normalized_shape_raises_value_error',)

_HALF = (torch.float16, torch.bfloat16)


def layer_norm(x: torch.Tensor, normalized_shape: int | Sequence[int],
               weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
               eps: float = 1e-5) -> torch.Tensor:
    """Normalise over the trailing ``normalized_shape`` dims with the biased variance."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or len(shape) > x.dim() or x.shape[-1] != shape[-1]:
        raise ValueError(f"normalized_shape {list(shape)} must be the last dims of an input "
                         f"of shape {list(x.shape)}")
    dims = tuple(range(-len(shape), 0))
    compute = torch.float32 if x.dtype in _HALF else x.dtype  # as F.layer_norm does
    h = x.to(compute)
    mean = h.mean(dims, keepdim=True)
    var = (h - mean).square().mean(dims, keepdim=True)
    out = (h - mean) / torch.sqrt(var + eps)
    if weight is not None:
        out = out * weight.to(compute)
    if bias is not None:
        out = out + bias.to(compute)
    return out.to(x.dtype)
