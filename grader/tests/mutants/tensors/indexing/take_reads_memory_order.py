"""Mistake: take reads x's storage in memory order (as_strided with stride 1)
instead of its logical row-major order: wrong for a transposed or sliced x."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_take_matches_torch',)


def _check_range(index: torch.Tensor, low: int, high: int, what: str) -> None:
    if index.numel() and (int(index.min()) < low or int(index.max()) >= high):
        bad = index[(index < low) | (index >= high)][0].item()
        raise IndexError(f"index {bad} is out of range for {what}")


def take(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Flat element index[p] of x in its logical (row-major) order, negatives from the end."""
    n = x.numel()
    _check_range(index, -n, n, f"a tensor of {n} elements")
    flat = x.as_strided((n,), (1,), x.storage_offset())
    return flat[index].clone()
