"""Mistake: the lower bound of the target check is off by one (``target < -1``): a
target of -1 is let through and fails inside gather with a RuntimeError instead of the
IndexError the spec asks for."""

import torch

CAUGHT_BY = ("test_target_out_of_range_raises_index_error",)


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction!r} is not a valid value for reduction")
    classes = logits.shape[1]
    keep = target != ignore_index
    bad = keep & ((target < -1) | (target >= classes))
    if bool(bad.any()):
        raise IndexError(f"target {int(target[bad][0])} is out of range")
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
        total = target_weight.sum()
        return ((1 - label_smoothing) * (targeted.sum() / total)
                + label_smoothing * (uniform.sum() / total))
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
