"""Mistake: the zeros tensor keeps torch's default float32 dtype, so the one-hot is float."""

import torch

CAUGHT_BY = ("test_dtype_is_int64", "test_matches_f_one_hot_given_classes")


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
    return torch.zeros(*labels.shape, num_classes).scatter_(-1, labels.unsqueeze(-1), 1)
