"""Mistake: takes the eigenvectors of the covariance matrix from torch.linalg.eigh and keeps
the first k columns, but eigh sorts eigenvalues ascending: those are the directions of
*least* variance, in the wrong order."""

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
    covariance = centred.T @ centred / (len(x) - 1)
    _, vectors = torch.linalg.eigh(covariance)
    components = vectors[:, :k].T
    return components, centred @ components.T
