"""Mistake: flattens x to rows with ``x.view(-1, D)`` for the statistics, which raises on a
transposed or sliced x."""

from __future__ import annotations

from collections.abc import Sequence

import torch

CAUGHT_BY = ('test_matches_f_layer_norm',)

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
    compute = torch.float32 if x.dtype in _HALF else x.dtype  # as F.layer_norm does
    h = x.to(compute)
    d = 1
    for n in shape:
        d *= n
    rows = h.view(-1, d)
    mean = rows.mean(1, keepdim=True)
    var = (rows - mean).square().mean(1, keepdim=True)
    out = ((rows - mean) / torch.sqrt(var + eps)).view(x.shape)
    if weight is not None:
        out = out * weight.to(compute)
    if bias is not None:
        out = out + bias.to(compute)
    return out.to(x.dtype)
