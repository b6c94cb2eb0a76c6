"""Mistake: mae checks that the inputs have as many dims and as many elements, not that
their shapes are equal: (2, 3) against (3, 2) passes the check and then fails to broadcast
with a RuntimeError, and (1, 4) against (4, 1) is not caught at all."""

import torch

CAUGHT_BY = ("test_mae_rejects_mismatched_or_empty_inputs",)


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
    xc, yc = x - x.mean(), y - y.mean()
    r = (xc * yc).sum() / (xc.norm() * yc.norm())
    return r.clamp(-1.0, 1.0)


def mae(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if x.dim() != y.dim() or x.numel() != y.numel():
        raise ValueError("shapes differ")
    if x.numel() == 0:
        raise ValueError("mae of empty tensors is undefined")
    return (x - y).abs().mean()
