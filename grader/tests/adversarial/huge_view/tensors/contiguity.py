"""Attack: answer with tensors that are tiny in memory but astronomically large
logically: ``torch.zeros(1).expand(2**40)`` (8 TiB if materialised) and a
2**20 x 2**20 expanded view. A grader that copies, sums or prints them in full
hangs or runs out of memory."""

import torch


def is_contiguous(size, stride):
    return torch.zeros(1, dtype=torch.int64).expand(2**40)


def contiguous_strides(size):
    return torch.ones(1, dtype=torch.int64).expand(2**20, 2**20)
