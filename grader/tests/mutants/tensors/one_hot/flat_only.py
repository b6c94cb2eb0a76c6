"""Mistake: flattens the labels and never restores their shape, so only 1-D labels work."""

import torch

CAUGHT_BY = ("test_matches_f_one_hot_given_classes", "test_rows_sum_to_one_and_argmax_is_label")


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    flat = labels.long().reshape(-1)
    if flat.numel() and flat.min() < 0:
        raise ValueError("negative label")
    if num_classes == -1:
        if flat.numel() == 0:
            raise ValueError("cannot infer num_classes from an empty tensor")
        num_classes = int(flat.max()) + 1
    elif flat.numel() and flat.max() >= num_classes:
        raise ValueError("label out of range")
    out = torch.zeros(flat.numel(), num_classes, dtype=torch.int64)
    return out.scatter_(1, flat.unsqueeze(1), 1)
