"""Mistake: calls the forbidden torch.gather and Tensor.scatter instead of indexing."""

import torch

CAUGHT_BY = ("test_gather_matches_torch", "test_scatter_matches_torch")


def gather(input, dim, index):
    try:
        return torch.gather(input, dim, index)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def scatter(input, dim, index, src):
    try:
        return input.scatter(dim, index, src)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
