"""Mistake: gives every fold n // k indices and puts the whole remainder in the last fold
(2, 2, 2, 4 for n=10, k=4) instead of one extra index in each of the first n % k folds."""

import torch

CAUGHT_BY = ("test_unshuffled_folds_match_tensor_split", "test_fold_sizes_differ_by_at_most_one")


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    else:
        order = torch.arange(n)
    size = n // k
    start = fold * size
    stop = n if fold == k - 1 else start + size
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
