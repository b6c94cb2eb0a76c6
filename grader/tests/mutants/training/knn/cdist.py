"""Mistake: distances by ``torch.cdist(queries, train_x)``: right for a few points, but with
more than 25 rows its default compute_mode switches to the expansion |q|^2 - 2 q.x + |x|^2
(one matmul), and for points far from the origin (coordinates near 1e9) the three terms are
near 1e18 and their difference is rounding noise, so the wrong points are nearest (found by
grading real code from public repositories: issue 27)."""

import torch

CAUGHT_BY = ("test_points_far_from_the_origin",)


def knn_predict(train_x: torch.Tensor, train_y: torch.Tensor, queries: torch.Tensor,
                k: int) -> torch.Tensor:
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    distances = torch.cdist(queries, train_x)                             # (M, N)
    nearest = distances.topk(k, dim=1, largest=False).indices            # (M, k)
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64,
                         device=votes.device)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)  # the first maximum: ties go to the smallest label
