"""Mistake: index_fill always fills along dim 0, x[index] = value."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_index_fill_matches_torch',)


def _dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(f"dim {dim} is out of range for a {ndim}-d tensor")
    return dim % ndim


def _check_range(index: torch.Tensor, low: int, high: int, what: str) -> None:
    if index.numel() and (int(index.min()) < low or int(index.max()) >= high):
        bad = index[(index < low) | (index >= high)][0].item()
        raise IndexError(f"index {bad} is out of range for {what}")


def index_fill(x: torch.Tensor, dim: int, index: torch.Tensor,
               value: float | int | torch.Tensor) -> torch.Tensor:
    """A contiguous copy of x with the slices index names along dim set to value."""
    dim = _dim(dim, x.dim())
    size = x.size(dim)
    _check_range(index, -size, size, f"dim {dim} of size {size}")
    out = x.clone(memory_format=torch.contiguous_format)
    if isinstance(value, torch.Tensor):
        value = value.item()
    out[index] = value
    return out
