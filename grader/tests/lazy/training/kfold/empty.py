"""Do-nothing: two empty int64 tensors."""

import torch


def kfold_indices(n, k, fold, shuffle=False, seed=0):
    return torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64)
