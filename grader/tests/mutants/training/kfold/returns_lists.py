"""Mistake: returns the indices as Python lists (.tolist()) instead of int64 tensors."""

import torch

CAUGHT_BY = ("test_returns_two_int64_tensors", "test_unshuffled_folds_match_tensor_split")


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False, seed: int = 0):
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    else:
        order = torch.arange(n)
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    stop = start + size + (1 if fold < extra else 0)
    return torch.cat([order[:start], order[stop:]]).tolist(), order[start:stop].tolist()
