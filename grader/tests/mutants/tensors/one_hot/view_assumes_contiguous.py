"""Mistake: flattens the labels with ``.view(-1)`` and scatters into a 2-D buffer, which only
works for contiguous labels: a transposed or sliced labels tensor makes ``view`` raise."""

import torch

CAUGHT_BY = ("test_matches_f_one_hot_given_classes",)


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    labels = labels.long()
    if labels.numel() and labels.min() < 0:
        raise ValueError("negative label")
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("cannot infer num_classes from an empty tensor")
        num_classes = int(labels.max()) + 1
    elif labels.numel() and labels.max() >= num_classes:
        raise ValueError("label out of range")
    flat = labels.view(-1)
    out = torch.zeros(flat.numel(), num_classes, dtype=torch.int64)
    out.scatter_(1, flat.unsqueeze(1), 1)
    return out.view(*labels.shape, num_classes)
