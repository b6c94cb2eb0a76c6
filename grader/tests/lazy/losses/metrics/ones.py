"""Do-nothing: every metric is a 0-d one of the right dtype (iou's answer for an empty union
or a mask against itself; pearson's for a sample against itself)."""

import torch


def iou(pred, target):
    return torch.ones((), dtype=torch.float32, device=pred.device)


def pearson(x, y):
    return torch.ones((), dtype=x.dtype, device=x.device)


def mae(x, y):
    return torch.ones((), dtype=x.dtype, device=x.device)
