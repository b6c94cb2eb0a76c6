"""Do-nothing: label 0 for every query (int64, one per query, on the inputs' device)."""

import torch


def knn_predict(train_x, train_y, queries, k):
    return torch.zeros(len(queries), dtype=torch.int64, device=queries.device)
