"""Mistake: calls topk(k) without largest=False, so the vote is over the k *farthest*
training points."""

import torch

CAUGHT_BY = ("test_predictions_are_the_vote_of_the_k_nearest", "test_vote_ties_go_to_the_smallest_label")


def knn_predict(train_x, train_y, queries, k):
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = ((queries[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    nearest = squared.topk(k, dim=1).indices
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)
