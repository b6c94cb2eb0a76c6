"""Mistake: label smoothing gives 1 - eps to the target and spreads eps over the C - 1 OTHER
classes, instead of eps / C over all C classes (the target included)."""

import torch

CAUGHT_BY = ("test_label_smoothing_matches",)


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
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
    others = -(log_p * per_class).sum(dim=1) - picked * weight[safe]
    uniform = others / max(classes - 1, 1) * keep
    loss = (1 - label_smoothing) * picked * target_weight + label_smoothing * uniform
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / target_weight.sum()
