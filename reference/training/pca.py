"""Reference solution: PCA via the SVD of the centred data."""

import torch


def pca(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D (N, D), got shape {tuple(x.shape)}")
    if not 1 <= k <= min(x.shape):
        raise ValueError(f"k must be in [1, {min(x.shape)}] for x of shape {tuple(x.shape)}, got {k}")
    centred = x - x.mean(dim=0, keepdim=True)
    _, _, vh = torch.linalg.svd(centred, full_matrices=False)
    components = vh[:k]
    return components, centred @ components.T
