"""Mistake: finds the components from the centred data but projects the original x, so
every projected column is shifted by the mean's coordinate."""

import torch


def _check(x: torch.Tensor, k: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")


CAUGHT_BY = ("test_projected_is_the_centred_data_in_the_components",)


def pca(x, k):
    _check(x, k)
    centred = x - x.mean(dim=0)
    _, _, vh = torch.linalg.svd(centred, full_matrices=False)
    components = vh[:k]
    return components, x @ components.T
