"""Attack (or just bad luck): correct, but each call sleeps 30 s first.

It must be scored by its timeouts (about two per function, then the rest of the
tests are marked timed out without calling it), not hang the grading.
"""

import time

import torch


def one_hot(labels, num_classes=-1):
    time.sleep(30)
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    labels = labels.long()
    if labels.numel() and labels.min() < 0:
        raise ValueError("negative label")
    if num_classes == -1:
        if labels.numel() == 0:
            raise ValueError("empty")
        num_classes = int(labels.max()) + 1
    elif labels.numel() and labels.max() >= num_classes:
        raise ValueError("label out of range")
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
    return out.scatter_(-1, labels.unsqueeze(-1), 1)
