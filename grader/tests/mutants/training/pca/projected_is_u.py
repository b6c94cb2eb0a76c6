"""Mistake: returns U[:, :k] as the projection, forgetting to scale each column by its
singular value (the projection is U[:, :k] * S[:k])."""

import torch


def _check(x: torch.Tensor, k: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")


CAUGHT_BY = ("test_projected_is_the_centred_data_in_the_components",
             "test_column_variances_are_the_explained_variances")


def pca(x, k):
    _check(x, k)
    centred = x - x.mean(dim=0)
    u, _, vh = torch.linalg.svd(centred, full_matrices=False)
    return vh[:k], u[:, :k]
