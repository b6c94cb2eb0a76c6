"""Mistake: cuts the order with torch.chunk, whose chunks hold ceil(n / k) indices, so the
last fold is short (3, 3, 3, 1 for n=10, k=4) and some k get fewer than k chunks."""

import torch

CAUGHT_BY = ("test_unshuffled_folds_match_tensor_split", "test_fold_sizes_differ_by_at_most_one",
             "test_folds_partition_the_examples")


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    else:
        order = torch.arange(n)
    folds = list(order.chunk(k))
    valid = folds.pop(fold)
    return torch.cat(folds), valid
