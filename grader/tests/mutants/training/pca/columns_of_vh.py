"""Mistake: treats Vh as V and takes its first k columns as the components; the principal
directions are the rows of Vh."""

import torch


def _check(x: torch.Tensor, k: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")


CAUGHT_BY = ("test_components_match_svd_up_to_sign", "test_column_variances_are_the_explained_variances")


def pca(x, k):
    _check(x, k)
    centred = x - x.mean(dim=0)
    _, _, vh = torch.linalg.svd(centred)
    components = vh[:, :k].T
    return components, centred @ components.T
