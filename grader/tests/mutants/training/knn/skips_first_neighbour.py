"""Mistake: takes topk(k + 1) and drops the nearest point, as in leave-one-out on the
training set, though the queries are not training points (and k = N then fails)."""

import torch

CAUGHT_BY = ("test_predictions_are_the_vote_of_the_k_nearest",)


def knn_predict(train_x, train_y, queries, k):
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = ((queries[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    nearest = squared.topk(min(k + 1, len(train_x)), dim=1, largest=False).indices[:, 1:]
    votes = train_y[nearest]
    counts = torch.zeros(len(queries), int(train_y.max()) + 1, dtype=torch.int64)
    counts.scatter_add_(1, votes, torch.ones_like(votes))
    return counts.argmax(dim=1)
