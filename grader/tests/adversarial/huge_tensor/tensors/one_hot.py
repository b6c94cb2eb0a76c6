"""Attack: answer with a 1.5 GiB tensor (3 * 2**26 int64 zeros, every page
touched), hoping the grader reads it all, swaps or crashes. The grader must
refuse it with a clear message."""

import torch


def one_hot(labels, num_classes=-1):
    return torch.zeros(3 * 2**26, dtype=torch.int64)
