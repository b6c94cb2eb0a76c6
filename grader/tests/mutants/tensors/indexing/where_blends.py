"""Mistake: where blends condition * x + ~condition * y: right on finite values,
nan wherever the element not taken is inf or nan (0 * inf is nan)."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_where_matches_torch',)


def where(condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A copy of the broadcast y with the broadcast x written where condition is True."""
    return (condition * x + (~condition) * y).to(x.dtype)
