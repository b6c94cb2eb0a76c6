"""Mistake: the covariance is a mean over n samples but the standard deviations
come from torch.std (unbiased, n - 1): r is scaled by (n - 1) / n."""

import torch

CAUGHT_BY = ("test_pearson_matches_torch_corrcoef",)


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
    if x.max() == x.min() or y.max() == y.min():
        return torch.zeros((), dtype=x.dtype, device=x.device)
    cov = ((x - x.mean()) * (y - y.mean())).mean()
    return cov / (x.std() * y.std())


def mae(x, y):
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("no elements")
    return (x - y).abs().mean()
