"""Mistake: the target term uses log_softmax, but the smoothing term sums
`softmax(logits).log()` over every class: with large logits the least likely classes have a
softmax of exactly 0, log(0) = -inf, and the smoothed loss is inf or nan."""

import torch

CAUGHT_BY = ("test_large_logits_with_label_smoothing_stay_finite",)


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
    uniform = -(logits.softmax(dim=1).log() * per_class).sum(dim=1) / classes * keep
    targeted = picked * target_weight
    if reduction == "mean":
        total = target_weight.sum()
        return (1 - label_smoothing) * (targeted.sum() / total) + label_smoothing * (uniform.sum() / total)
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
