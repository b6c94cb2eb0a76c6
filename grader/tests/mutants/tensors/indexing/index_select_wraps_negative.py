"""Mistake: index_select lets Python indexing wrap a negative index around (-1 is
the last slice) instead of refusing it, as torch.index_select does."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_index_select_refuses_index_out_of_range',)


def _dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(f"dim {dim} is out of range for a {ndim}-d tensor")
    return dim % ndim


def _check_range(index: torch.Tensor, low: int, high: int, what: str) -> None:
    if index.numel() and (int(index.min()) < low or int(index.max()) >= high):
        bad = index[(index < low) | (index >= high)][0].item()
        raise IndexError(f"index {bad} is out of range for {what}")


def index_select(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Slices index[0], index[1], ... of x along dim (no wrapping of negative values)."""
    dim = _dim(dim, x.dim())
    _check_range(index, -x.size(dim), x.size(dim), f"dim {dim} of size {x.size(dim)}")
    return x[(slice(None),) * dim + (index.long(),)].clone()
