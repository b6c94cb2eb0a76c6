"""Do-nothing: zeros of the right shape and dtype (the index's shape for gather, the input's for scatter)."""

import torch


def gather(input, dim, index):
    return torch.zeros(index.shape, dtype=input.dtype)


def scatter(input, dim, index, src):
    return torch.zeros_like(input)
