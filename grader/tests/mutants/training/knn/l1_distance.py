"""Mistake: ranks the training points by the L1 distance sum |q - x| instead of the Euclidean
one: the same order in one dimension, and whenever the coordinates are only 0 or 1, but not in
general ((3, 0) is nearer than (2, 2) by L1, farther by Euclid)."""

import torch

CAUGHT_BY = ("test_distance_is_euclidean",)


def knn_predict(train_x: torch.Tensor, train_y: torch.Tensor, queries: torch.Tensor,
                k: int) -> torch.Tensor:
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = (queries[:, None, :] - train_x[None, :, :]).abs().sum(-1)  # L1
    nearest = squared.topk(k, dim=1, largest=False).indices               # (M, k)
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64,
                         device=votes.device)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)  # the first maximum: ties go to the smallest label
