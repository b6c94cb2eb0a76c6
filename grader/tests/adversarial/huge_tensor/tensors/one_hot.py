"""Attack: answer with a 320 MiB tensor (5 * 2**23 int64 zeros, every page
touched: over the wire's 256 MiB limit), hoping the grader reads it all, swaps or
crashes. The grader must refuse it with a clear message."""

import torch


def one_hot(labels, num_classes=-1):
    return torch.zeros(5 * 2**23, dtype=torch.int64)
