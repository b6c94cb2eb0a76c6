"""Mistake: infers C = labels.max() instead of max + 1 (label 3 needs 4 classes)."""

import torch

CAUGHT_BY = ("test_matches_f_one_hot_inferred_classes",)


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    labels = labels.long()
    if labels.numel() and labels.min() < 0:
        raise ValueError("negative label")
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("cannot infer num_classes from an empty tensor")
        num_classes = int(labels.max())
    elif labels.numel() and labels.max() >= num_classes:
        raise ValueError("label out of range")
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
    return out.scatter_(-1, labels.unsqueeze(-1), 1)
