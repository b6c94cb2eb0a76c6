"""Do-nothing: every label becomes class 0 (a one-hot row, always the same), right shape and dtype."""

import torch


def one_hot(labels, num_classes=-1):
    if num_classes == -1:
        num_classes = int(labels.max()) + 1 if labels.numel() else 1
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
    out[..., 0] = 1
    return out
