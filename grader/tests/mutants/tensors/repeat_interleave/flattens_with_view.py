"""Mistake: flattens x with ``x.view(-1)`` for ``dim=None``, which raises on a transposed
or sliced x."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_int_repeats_match_torch', 'test_tensor_repeats_match_torch')


def repeat_interleave(x: torch.Tensor, repeats: int | torch.Tensor,
                      dim: int | None = None) -> torch.Tensor:
    """Repeat each slice of ``x`` along ``dim`` (flattened when None) ``repeats`` times."""
    if dim is None:
        x, dim = x.view(-1), 0
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} is out of range for a {x.dim()}-d tensor")
    n = x.size(dim)
    counts = _counts(repeats, n, x.device)
    ends = counts.cumsum(0)
    total = int(ends[-1]) if n else 0
    positions = torch.arange(total, device=x.device)
    return x.index_select(dim, torch.searchsorted(ends, positions, right=True))


def _counts(repeats: int | torch.Tensor, n: int, device: torch.device) -> torch.Tensor:
    """One int64 count per slice, on ``device``; ValueError for bad repeats."""
    if isinstance(repeats, torch.Tensor):
        if repeats.dim() > 1:
            raise ValueError(f"repeats must be 0-d or 1-d, got shape {tuple(repeats.shape)}")
        counts = repeats.reshape(-1).to(device=device, dtype=torch.int64)
        if counts.numel() == 1:
            counts = counts.expand(n)
        elif counts.numel() != n:
            raise ValueError(f"repeats has {counts.numel()} counts for {n} slices")
    else:
        counts = torch.full((n,), int(repeats), dtype=torch.int64, device=device)
    if counts.numel() and counts.min() < 0:
        raise ValueError("repeats must be non-negative")
    return counts
