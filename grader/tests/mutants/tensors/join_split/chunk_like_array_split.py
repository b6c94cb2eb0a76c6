"""Mistake: numpy's ``array_split`` (torch's ``tensor_split``): always ``chunks`` pieces, the
first ``n % chunks`` one longer, so 5 rows in 4 chunks are 2, 1, 1, 1 where torch.chunk gives
2, 2, 1."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_chunk_matches_torch',)


def _wrap(dim: int, ndim: int) -> int:
    """``dim`` counted from the front among ``ndim`` positions."""
    if not -ndim <= dim < ndim:
        raise IndexError(f"dim {dim} out of range for {ndim} places")
    return dim % ndim


def stack(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Join tensors of one shape along a NEW dim ``dim`` of the result."""
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    first, *_ = tensors
    shape = tuple(first.shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise ValueError(f"stack needs tensors of one shape: tensor 0 is {shape}, "
                             f"tensor {i} is {tuple(t.shape)}")
    d = _wrap(dim, len(shape) + 1)  # the result has one dim more
    out = torch.empty((*shape[:d], len(tensors), *shape[d:]), dtype=first.dtype, device=first.device)
    for i, t in enumerate(tensors):
        out.select(d, i).copy_(t)
    return out


def _skipped(t: torch.Tensor) -> bool:
    """torch's legacy rule: a 1-D tensor of shape (0,) takes no part in cat."""
    return tuple(t.shape) == (0,)


def cat(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Join tensors along their EXISTING dim ``dim``."""
    if not tensors:
        raise ValueError("cat needs at least one tensor")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise ValueError(f"tensor {i} is 0-d: a 0-d tensor has no dim to join along")
    kept = [t for t in tensors if not _skipped(t)]
    if not kept:  # nothing but legacy empties
        first, *_ = tensors
        return torch.empty(0, dtype=first.dtype, device=first.device)
    ref, *_ = kept
    d = _wrap(dim, ref.dim())
    for t in kept:
        if t.dim() != ref.dim() or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref.shape)) if k != d):
            raise ValueError(f"cat needs equal sizes outside dim {d}: {tuple(ref.shape)} "
                             f"and {tuple(t.shape)}")
    total = sum(t.shape[d] for t in kept)
    out = torch.empty((*ref.shape[:d], total, *ref.shape[d + 1:]), dtype=ref.dtype, device=ref.device)
    start = 0
    for t in kept:
        out.narrow(d, start, t.shape[d]).copy_(t)
        start += t.shape[d]
    return out


def split(x: torch.Tensor, split_size_or_sections: int | list[int] | tuple[int, ...],
          dim: int = 0) -> tuple[torch.Tensor, ...]:
    """Views of ``x`` along ``dim``: pieces of one size (the last may be shorter), or of
    the listed sizes."""
    if x.dim() == 0:
        raise ValueError("split needs a tensor of at least one dim")
    d = _wrap(dim, x.dim())
    n = x.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise ValueError(f"split_size must be non-negative, got {size}")
        if size == 0 and n != 0:
            raise ValueError(f"split_size 0 cannot split a dim of size {n}")
        if n == 0:  # one empty piece
            return (x.narrow(d, 0, n),)
        return tuple(x.narrow(d, start, min(size, n - start)) for start in range(0, n, size))
    sizes = list(split_size_or_sections)
    if any(s < 0 for s in sizes) or sum(sizes) != n:
        raise ValueError(f"sections {sizes} must be non-negative and sum to {n}, the size of dim {d}")
    pieces, start = [], 0
    for s in sizes:
        pieces.append(x.narrow(d, start, s))
        start += s
    return tuple(pieces)


def chunk(x: torch.Tensor, chunks: int, dim: int = 0) -> tuple[torch.Tensor, ...]:
    """``split`` by ceil(size / chunks): at most ``chunks`` views, maybe fewer."""
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    if x.dim() == 0:
        raise ValueError("chunk needs a tensor of at least one dim")
    d = _wrap(dim, x.dim())
    n = x.shape[d]
    if n == 0:  # torch keeps the count here: `chunks` empty pieces
        return split(x, [0] * chunks, d)
    base, extra = divmod(n, chunks)
    return split(x, [base + 1] * extra + [base] * (chunks - extra), d)
