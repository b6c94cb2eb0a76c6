"""Mistake: masked_select indexes x with the mask as it comes, x[mask]: a mask of
another (broadcastable) shape raises or selects the wrong elements."""

from __future__ import annotations

import torch

CAUGHT_BY = ('test_masked_select_matches_torch',)


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The elements of the broadcast x where the broadcast mask is True, in row-major order."""
    return x[mask].reshape(-1)
