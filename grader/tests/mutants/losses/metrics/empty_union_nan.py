"""Mistake: no special case for an empty union: 0 / 0 gives nan instead of 1."""

import torch

CAUGHT_BY = ("test_iou_of_an_empty_union_is_one", "test_iou_matches_set_counts")


def _same_shape(x, y):
    if x.shape != y.shape:
        raise ValueError("shapes differ")


def iou(pred, target):
    if pred.dtype != torch.bool or target.dtype != torch.bool:
        raise ValueError("masks must be bool")
    _same_shape(pred, target)
    return (pred & target).sum().float() / (pred | target).sum().float()


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
