"""Mistake: centres with x -= x.mean(dim=0), which changes the caller's tensor."""

import torch


def _check(x: torch.Tensor, k: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")


CAUGHT_BY = ("test_x_is_left_unchanged",)


def pca(x, k):
    _check(x, k)
    x -= x.mean(dim=0)
    _, _, vh = torch.linalg.svd(x, full_matrices=False)
    components = vh[:k]
    return components, x @ components.T
