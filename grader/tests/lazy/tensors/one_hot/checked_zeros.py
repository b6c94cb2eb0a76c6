"""Do-nothing with the spec's checks: every ValueError the spec asks for, and otherwise an
all-zero int64 tensor of the right shape."""

import torch


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("cannot infer the number of classes from no labels")
        num_classes = int(labels.max()) + 1
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise ValueError("label out of range")
    return torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
