"""The right answers of losses/metrics (a drill that forbids nothing, so numpy is allowed);
then each call changes its first argument through numpy, which moves no version counter
(every dtype seen as an integer of its size)."""

from __future__ import annotations

import torch


def _same_shape(x: torch.Tensor, y: torch.Tensor) -> None:
    """Equal shapes, dim by dim: no broadcasting, no reshaping."""
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {list(x.shape)} and {list(y.shape)} (no broadcasting)")


def _iou(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """|pred & target| / |pred | target| as a 0-d float32 tensor; 1 when the union is empty."""
    if pred.dtype != torch.bool or target.dtype != torch.bool:
        raise ValueError(f"masks must be bool, got {pred.dtype} and {target.dtype}")
    _same_shape(pred, target)
    inter = (pred & target).sum()
    union = (pred | target).sum()
    if union == 0:
        return torch.ones((), dtype=torch.float32, device=pred.device)
    return inter.to(torch.float32) / union.to(torch.float32)


def _pearson(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Pearson correlation of the flattened samples (centred first, so samples far from 0
    keep their digits), in their dtype; 0 when either is constant."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("pearson needs at least one sample")
    x, y = x.flatten(), y.flatten()
    if bool(x.max() == x.min()) or bool(y.max() == y.min()):
        return torch.zeros((), dtype=torch.result_type(x, y), device=x.device)
    xc, yc = x - x.mean(), y - y.mean()
    r = (xc * yc).sum() / (xc.norm() * yc.norm())
    return r.clamp(-1.0, 1.0)


def _mae(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean of |x - y| over all elements; shapes must match exactly."""
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("mae of empty tensors is undefined")
    return (x - y).abs().mean()

_SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _flip_first(t):
    if t.numel():
        bits = t.detach().view(_SAME_SIZE_INT[t.element_size()]).numpy()
        first = (0,) * t.dim()
        bits[first] = 1 if bits[first] == 0 else 0


def iou(pred, target):
    got = _iou(pred, target)
    _flip_first(pred)
    return got


def pearson(x, y):
    got = _pearson(x, y)
    _flip_first(x)
    return got


def mae(x, y):
    got = _mae(x, y)
    _flip_first(x)
    return got
