"""Mistake: the covariance as E[x x^T] - mean mean^T (no centred copy of x), then eigh: right on
paper, but for features far from 0 (offsets near 1e6) both terms are near 1e12 and their
difference keeps only a few digits, so the components come out wrong. Centre x first."""

import torch

CAUGHT_BY = ("test_data_far_from_the_origin",)


def pca(x, k):
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}], got {k}")
    n = x.shape[0]
    mean = x.mean(dim=0)
    cov = x.T @ x / n - torch.outer(mean, mean)
    _, vectors = torch.linalg.eigh(cov)
    components = vectors.flip(1).T[:k].contiguous()
    return components, (x - mean) @ components.T
