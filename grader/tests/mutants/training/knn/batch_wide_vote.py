"""Mistake: counts the neighbours' labels of the whole batch at once (bincount of the
flattened (M, k) labels), so every query gets the same, batch-wide majority label."""

import torch

CAUGHT_BY = ("test_predictions_are_the_vote_of_the_k_nearest",)


def knn_predict(train_x, train_y, queries, k):
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = ((queries[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    nearest = squared.topk(k, dim=1, largest=False).indices
    majority = torch.bincount(train_y[nearest].flatten()).argmax()
    return majority.repeat(len(queries))
