"""Mistake: counts votes with collections.Counter over the neighbours nearest first and takes
most_common(1): a tie then goes to the label seen first (the nearest neighbour's), not to
the smallest label."""

from collections import Counter

import torch

CAUGHT_BY = ("test_vote_ties_go_to_the_smallest_label", "test_predictions_are_the_vote_of_the_k_nearest")


def knn_predict(train_x, train_y, queries, k):
    if not 1 <= k <= len(train_x):
        raise ValueError(f"k must be in [1, {len(train_x)}], got {k}")
    squared = ((queries[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    nearest = squared.topk(k, dim=1, largest=False, sorted=True).indices
    labels = [Counter(train_y[row].tolist()).most_common(1)[0][0] for row in nearest]
    return torch.tensor(labels, dtype=torch.int64, device=train_y.device)
