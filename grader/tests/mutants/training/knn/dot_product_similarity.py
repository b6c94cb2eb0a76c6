"""Mistake: ranks training points by the dot product queries @ train_x.T (largest first)
instead of by distance; that is cosine-like similarity, not nearness."""

import torch

CAUGHT_BY = ("test_predictions_are_the_vote_of_the_k_nearest", "test_vote_ties_go_to_the_smallest_label")


def knn_predict(train_x, train_y, queries, k):
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    nearest = (queries @ train_x.T).topk(k, dim=1).indices
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)
