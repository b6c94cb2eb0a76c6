"""Attack: answers full of NaN, of the right dtype and shape.

``nan != nan``: a check written as ``not (got != expected).any()`` or one that
compares with ``equal_nan=True`` would pass them. ``iou`` / ``pearson`` /
``mae`` return NaN (and ``mae`` sometimes +inf) and never raise.
"""

import torch


def iou(pred, target):
    return torch.full((), float("nan"), dtype=torch.float32)


def pearson(x, y):
    return torch.full((), float("nan"), dtype=torch.result_type(x, y))


def mae(x, y):
    value = float("inf") if x.numel() % 2 else float("nan")
    return torch.full((), value, dtype=torch.result_type(x, y))
