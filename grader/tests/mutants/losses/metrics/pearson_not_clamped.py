"""Mistake: r is returned as the formula computes it, not clamped: for samples on a line
(y = a * x + b) rounding lands just past +1 or -1 about one time in four, outside the
[-1, 1] the spec promises."""

from __future__ import annotations

import torch

CAUGHT_BY = ("test_pearson_of_a_line_stays_within_minus_one_and_one",)


def _same_shape(x: torch.Tensor, y: torch.Tensor) -> None:
    """Equal shapes, dim by dim: no broadcasting, no reshaping."""
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {list(x.shape)} and {list(y.shape)} (no broadcasting)")


def iou(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """|pred & target| / |pred | target| as a 0-d float32 tensor; 1 when the union is empty."""
    if pred.dtype != torch.bool or target.dtype != torch.bool:
        raise ValueError(f"masks must be bool, got {pred.dtype} and {target.dtype}")
    _same_shape(pred, target)
    inter = (pred & target).sum()
    union = (pred | target).sum()
    if union == 0:
        return torch.ones((), dtype=torch.float32, device=pred.device)
    return inter.to(torch.float32) / union.to(torch.float32)


def pearson(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Pearson correlation of the flattened samples (centred first, so samples far from 0
    keep their digits), in their dtype; 0 when either is constant."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("pearson needs at least one sample")
    x, y = x.flatten(), y.flatten()
    if bool(x.max() == x.min()) or bool(y.max() == y.min()):
        return torch.zeros((), dtype=torch.result_type(x, y), device=x.device)
    xc, yc = x - x.mean(), y - y.mean()
    return (xc * yc).sum() / (xc.norm() * yc.norm())


def mae(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean of |x - y| over all elements; shapes must match exactly."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("mae of empty tensors is undefined")
    return (x - y).abs().mean()
