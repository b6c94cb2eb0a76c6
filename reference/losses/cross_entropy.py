"""Reference solution: cross-entropy from log_softmax, equal to ``F.cross_entropy``."""

from __future__ import annotations

import torch


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Weighted, smoothed cross-entropy of class-index targets over dim 1."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    classes = logits.shape[1]
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
    if weight is None:
        weight = torch.ones(classes, dtype=logits.dtype, device=logits.device)
    log_p = logits.log_softmax(dim=1)
    safe = torch.where(keep, target, torch.zeros_like(target))
    picked = -log_p.gather(1, safe.unsqueeze(1)).squeeze(1)
    target_weight = weight[safe] * keep
    per_class = weight.view(1, classes, *([1] * (logits.dim() - 2)))
    uniform = -(log_p * per_class).sum(dim=1) / classes * keep
    loss = (1 - label_smoothing) * picked * target_weight + label_smoothing * uniform
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / target_weight.sum()
