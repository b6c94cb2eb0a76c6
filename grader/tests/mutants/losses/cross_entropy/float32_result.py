"""Mistake: computes in float32 "for accuracy" (`logits.float()`) and returns that: a float16
or bfloat16 loss comes back as float32, not in the logits' dtype."""

import torch

CAUGHT_BY = ("test_reduced_precision_on_cpu",)


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
        weight = None if weight is None else weight.float()
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
        total = target_weight.sum()
        return (1 - label_smoothing) * (targeted.sum() / total) + label_smoothing * (uniform.sum() / total)
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
