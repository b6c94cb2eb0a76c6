"""Mistake: the mean divides the summed smoothed loss by the kept targets' total weight W in
one go, `loss.sum() / W`: right while W > 0, but when every kept target's class has weight 0
it gives (positive) / 0 = inf where F.cross_entropy divides each term by W and gets nan."""

import torch

CAUGHT_BY = ("test_mean_is_nan_when_the_kept_targets_weigh_nothing",)


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
    uniform = -(log_p * per_class).sum(dim=1) / classes * keep
    loss = (1 - label_smoothing) * picked * target_weight + label_smoothing * uniform
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / target_weight.sum()
