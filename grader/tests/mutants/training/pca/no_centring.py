"""Mistake: takes the SVD of x itself, without subtracting the mean example, so the first
"component" points towards the mean instead of along the spread."""

import torch


def _check(x: torch.Tensor, k: int) -> None:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")


CAUGHT_BY = ("test_components_match_svd_up_to_sign", "test_projected_is_the_centred_data_in_the_components",
             "test_column_variances_are_the_explained_variances")


def pca(x, k):
    _check(x, k)
    _, _, vh = torch.linalg.svd(x, full_matrices=False)
    components = vh[:k]
    return components, x @ components.T
