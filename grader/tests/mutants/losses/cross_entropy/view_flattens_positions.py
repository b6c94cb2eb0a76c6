"""Mistake: flattens the spatial positions with `.view` (`log_p.view(N, C, L)`,
`target.view(N, L)`), which only works on contiguous tensors: a transposed target or a
strided view of the logits raises "view size is not compatible with input tensor's size and
stride" (use reshape, or work over dim 1 without flattening)."""

import math

import torch

CAUGHT_BY = ("test_any_memory_layout_matches",)


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    classes = logits.shape[1]
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= classes))
    if bool(bad.any()):
        raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
    if weight is None:
        weight = torch.ones(classes, dtype=logits.dtype, device=logits.device)
    n, positions = logits.shape[0], math.prod(logits.shape[2:])
    log_p = logits.log_softmax(dim=1).view(n, classes, positions)
    flat_target = target.view(n, positions)
    flat_keep = keep.view(n, positions)
    safe = torch.where(flat_keep, flat_target, torch.zeros_like(flat_target))
    picked = (-log_p.gather(1, safe.unsqueeze(1)).squeeze(1)).view(target.shape)
    target_weight = weight[safe].view(target.shape) * keep
    uniform = (-(log_p * weight.view(1, classes, 1)).sum(dim=1) / classes).view(target.shape) * keep
    targeted = picked * target_weight
    if reduction == "mean":
        total = target_weight.sum()
        return (1 - label_smoothing) * (targeted.sum() / total) + label_smoothing * (uniform.sum() / total)
    loss = (1 - label_smoothing) * targeted + label_smoothing * uniform
    return loss if reduction == "none" else loss.sum()
