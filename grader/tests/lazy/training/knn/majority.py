"""Do-nothing: the most common training label (ties to the smallest) for every query, without
looking at any distance (right only when k == N)."""

import torch


def knn_predict(train_x, train_y, queries, k):
    label = torch.bincount(train_y).argmax()
    return label.repeat(len(queries))
