"""Do-nothing, the best per function: every metric checks its arguments as the spec says
(ValueError); then iou is 1.0 when the masks are equal and 0.0 otherwise (symmetric, 1 on
itself, 0 when disjoint, 1 for an empty union), pearson is 0 and mae is 0."""

import torch


def _check(x, y):
    if x.shape != y.shape or x.numel() == 0:
        raise ValueError("x and y must have one shape and at least one element")


def iou(pred, target):
    if pred.dtype != torch.bool or target.dtype != torch.bool or pred.shape != target.shape:
        raise ValueError("masks must be bool tensors of one shape")
    same = bool(torch.equal(pred, target))
    return torch.tensor(1.0 if same else 0.0, dtype=torch.float32, device=pred.device)


def pearson(x, y):
    _check(x, y)
    return torch.zeros((), dtype=x.dtype, device=x.device)


def mae(x, y):
    _check(x, y)
    return torch.zeros((), dtype=x.dtype, device=x.device)
