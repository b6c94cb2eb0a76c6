"""Mistake: zero variance is detected with the computed sum of squared
deviations == 0; for a constant like 0.1 repeated, x - x.mean() is ~1e-17, not 0, so the
result is noise (or nan) instead of exactly 0."""

import torch

CAUGHT_BY = ("test_pearson_of_a_constant_is_exactly_zero",)


def _same_shape(x, y):
    if x.shape != y.shape:
        raise ValueError("shapes differ")


def iou(pred, target):
    if pred.dtype != torch.bool or target.dtype != torch.bool:
        raise ValueError("masks must be bool")
    _same_shape(pred, target)
    inter = (pred & target).sum().float()
    union = (pred | target).sum().float()
    if union == 0:
        return torch.ones((), device=pred.device)
    return inter / union


def pearson(x, y):
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("no samples")
    x, y = x.flatten(), y.flatten()
    xc, yc = x - x.mean(), y - y.mean()
    sxx, syy = (xc * xc).sum(), (yc * yc).sum()
    if sxx == 0 or syy == 0:
        return torch.zeros((), dtype=x.dtype, device=x.device)
    return ((xc * yc).sum() / (sxx.sqrt() * syy.sqrt())).clamp(-1, 1)


def mae(x, y):
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("no elements")
    return (x - y).abs().mean()
