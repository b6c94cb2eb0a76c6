"""Mistake: gather computes flat offsets with row-major strides and reads
``input.view(-1)``, which raises on a transposed or sliced input."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_gather_matches_torch',)

INDEX_DTYPES = (torch.int64, torch.int32)


def _check_dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(f"dim {dim} is out of range for a {ndim}-d tensor")
    return dim % ndim


def _check_index(input: torch.Tensor, dim: int, index: torch.Tensor) -> int:
    """The checks gather and scatter share; returns ``dim`` made non-negative."""
    if index.dtype not in INDEX_DTYPES:
        raise ValueError(f"index must be int64 or int32, got {index.dtype}")
    if index.dim() != input.dim():
        raise ValueError(f"index has {index.dim()} dims but input has {input.dim()}")
    dim = _check_dim(dim, input.dim())
    for d, (i, n) in enumerate(zip(index.shape, input.shape)):
        if d != dim and i > n:
            raise ValueError(f"index {tuple(index.shape)} is larger than input "
                             f"{tuple(input.shape)} in dim {d}")
    if index.numel() and (index.min() < 0 or index.max() >= input.size(dim)):
        bad = index[(index < 0) | (index >= input.size(dim))][0].item()
        raise ValueError(f"index {bad} is out of range for dim {dim} of size {input.size(dim)}")
    return dim


def _coordinates(index: torch.Tensor, dim: int) -> tuple[torch.Tensor, ...]:
    """One coordinate tensor per dim, of the shape of ``index``; ``index`` along ``dim``."""
    aranges = [torch.arange(n, device=index.device) for n in index.shape]
    grids = list(torch.meshgrid(*aranges, indexing="ij"))
    grids[dim] = index.long()
    return tuple(grids)


def gather(input: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """``out[p] = input[p with its dim-th coordinate replaced by index[p]]``."""
    dim = _check_index(input, dim, index)
    coords = _coordinates(index, dim)
    flat, step = torch.zeros(index.shape, dtype=torch.int64), 1
    for d in reversed(range(input.dim())):
        flat = flat + coords[d] * step
        step *= input.size(d)
    return input.view(-1)[flat]


def scatter(input: torch.Tensor, dim: int, index: torch.Tensor,
            src: torch.Tensor | float | int) -> torch.Tensor:
    """A copy of ``input`` with ``src[p]`` written at ``p`` moved along ``dim`` to ``index[p]``."""
    dim = _check_index(input, dim, index)
    if isinstance(src, torch.Tensor):
        if src.dim() != index.dim():
            raise ValueError(f"src has {src.dim()} dims but index has {index.dim()}")
        if any(i > n for i, n in zip(index.shape, src.shape)):
            raise ValueError(f"index {tuple(index.shape)} is larger than src {tuple(src.shape)}")
        if src.dtype != input.dtype:
            raise ValueError(f"src dtype {src.dtype} differs from input dtype {input.dtype}")
        src = src[tuple(slice(0, n) for n in index.shape)]
    out = input.clone()
    out[_coordinates(index, dim)] = src
    return out
