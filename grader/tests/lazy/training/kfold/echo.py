"""Do-nothing: every index is both train and valid: (torch.arange(n), torch.arange(n))."""

import torch


def kfold_indices(n, k, fold, shuffle=False, seed=0):
    return torch.arange(n), torch.arange(n)
