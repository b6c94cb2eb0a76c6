"""Mistake: squared distances by the expansion |q|^2 - 2 q.x + |x|^2 (one matmul, no (M, N, D)
tensor): right on paper, but for points far from the origin (coordinates near 1e9) the three
terms are near 1e18 and their difference is rounding noise, so the wrong points are nearest."""

import torch

CAUGHT_BY = ("test_points_far_from_the_origin",)


def knn_predict(train_x: torch.Tensor, train_y: torch.Tensor, queries: torch.Tensor,
                k: int) -> torch.Tensor:
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = ((queries ** 2).sum(-1)[:, None] - 2 * queries @ train_x.T
               + (train_x ** 2).sum(-1)[None, :])
    nearest = squared.topk(k, dim=1, largest=False).indices               # (M, k)
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64,
                         device=votes.device)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)  # the first maximum: ties go to the smallest label
