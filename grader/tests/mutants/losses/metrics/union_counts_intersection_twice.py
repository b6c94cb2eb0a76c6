"""Mistake: the union is taken as pred.sum() + target.sum(), which counts the
intersection twice (the Dice denominator): a mask against itself scores 0.5."""

import torch

CAUGHT_BY = ("test_iou_matches_set_counts", "test_iou_is_symmetric_one_on_itself_zero_when_disjoint")


def _same_shape(x, y):
    if x.shape != y.shape:
        raise ValueError("shapes differ")


def iou(pred, target):
    if pred.dtype != torch.bool or target.dtype != torch.bool:
        raise ValueError("masks must be bool")
    _same_shape(pred, target)
    inter = (pred & target).sum().float()
    union = (pred.sum() + target.sum()).float()
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
    xc, yc = x - x.mean(), y - y.mean()
    return ((xc * yc).sum() / (xc.norm() * yc.norm())).clamp(-1, 1)


def mae(x, y):
    _same_shape(x, y)
    if x.numel() == 0:
        raise ValueError("no elements")
    return (x - y).abs().mean()
