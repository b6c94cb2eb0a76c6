"""Reference solution: cross-entropy from log_softmax, equal to ``F.cross_entropy``."""

from __future__ import annotations

import torch


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> torch.Tensor:
    """Weighted, smoothed cross-entropy of class-index targets over dim 1, in any memory
    layout and in the logits' dtype; the mean divides each term by the kept targets' total
    weight (nan when that is 0, as ``F.cross_entropy``)."""
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
    targeted = picked * target_weight
    if reduction == "mean":
        # Each term divided by the kept targets' total weight, as F.cross_entropy does: when
        # that is 0 the target term is 0 / 0 = nan, and so is the mean (not inf).
        total = target_weight.sum()
        return (1 - label_smoothing) * (targeted.sum() / total) + label_smoothing * (uniform.sum() / total)
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
