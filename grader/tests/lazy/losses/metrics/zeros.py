"""Do-nothing: every metric is a 0-d zero of the right dtype (float32 for iou, the inputs'
dtype otherwise) on the inputs' device."""

import torch


def iou(pred, target):
    return torch.zeros((), dtype=torch.float32, device=pred.device)


def pearson(x, y):
    return torch.zeros((), dtype=x.dtype, device=x.device)


def mae(x, y):
    return torch.zeros((), dtype=x.dtype, device=x.device)
