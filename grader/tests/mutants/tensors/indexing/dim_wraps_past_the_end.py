"""Mistake: the dim check lets dim == x.dim() through, and dim % ndim then wraps it to dim 0
(torch raises IndexError: "Dimension out of range"). Found by torchdrill audit."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_a_dim_out_of_range_raises_index_error',)


def _dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim <= ndim:
        raise IndexError(f"dim {dim} is out of range for a {ndim}-d tensor")
    return dim % ndim


def _check_range(index: torch.Tensor, low: int, high: int, what: str) -> None:
    if index.numel() and (int(index.min()) < low or int(index.max()) >= high):
        bad = index[(index < low) | (index >= high)][0].item()
        raise IndexError(f"index {bad} is out of range for {what}")


def index_select(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Slices index[0], index[1], ... of x along dim (no wrapping of negative values)."""
    dim = _dim(dim, x.dim())
    _check_range(index, 0, x.size(dim), f"dim {dim} of size {x.size(dim)}")
    return x[(slice(None),) * dim + (index.long(),)].clone()


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The elements of the broadcast x where the broadcast mask is True, in row-major order."""
    shape = torch.broadcast_shapes(x.shape, mask.shape)
    return x.expand(shape)[mask.expand(shape)].reshape(-1)


def take(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Flat element index[p] of x in its logical (row-major) order, negatives from the end."""
    n = x.numel()
    _check_range(index, -n, n, f"a tensor of {n} elements")
    return x.reshape(-1)[index].clone()


def where(condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A copy of the broadcast y with the broadcast x written where condition is True."""
    shape = torch.broadcast_shapes(condition.shape, x.shape, y.shape)
    out = y.expand(shape).clone(memory_format=torch.contiguous_format)
    chosen = condition.expand(shape)
    out[chosen] = x.expand(shape)[chosen]
    return out


def index_fill(x: torch.Tensor, dim: int, index: torch.Tensor,
               value: float | int | torch.Tensor) -> torch.Tensor:
    """A contiguous copy of x with the slices index names along dim set to value."""
    dim = _dim(dim, x.dim())
    size = x.size(dim)
    _check_range(index, -size, size, f"dim {dim} of size {size}")
    out = x.clone(memory_format=torch.contiguous_format)
    if isinstance(value, torch.Tensor):
        value = value.item()
    out[(slice(None),) * dim + (index,)] = value
    return out
