"""Mistake: the one-pass textbook formula
r = (n sum(xy) - sum(x) sum(y)) / sqrt((n sum(x^2) - sum(x)^2) (n sum(y^2) - sum(y)^2)):
right on paper, but for samples far from 0 (an offset of 1e6 or more) the differences of
huge sums cancel every digit. Centre first."""

import torch

CAUGHT_BY = ("test_pearson_of_samples_far_from_zero",)


def _same_shape(x: torch.Tensor, y: torch.Tensor) -> None:
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
    """Pearson correlation of the flattened samples; 0 when either is constant."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("pearson needs at least one sample")
    x, y = x.flatten(), y.flatten()
    if bool(x.max() == x.min()) or bool(y.max() == y.min()):
        return torch.zeros((), dtype=torch.result_type(x, y), device=x.device)
    n = x.numel()
    num = n * (x * y).sum() - x.sum() * y.sum()
    r = num / (torch.sqrt(n * (x * x).sum() - x.sum() ** 2) * torch.sqrt(n * (y * y).sum() - y.sum() ** 2))
    return r.clamp(-1.0, 1.0)


def mae(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean of |x - y| over all elements; shapes must match exactly."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("mae of empty tensors is undefined")
    return (x - y).abs().mean()
