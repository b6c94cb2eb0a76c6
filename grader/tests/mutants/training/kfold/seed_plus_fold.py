"""Mistake: seeds the generator with seed + fold, as if each fold needed its own shuffle;
each call then cuts a different permutation and the validation folds overlap."""

import torch

CAUGHT_BY = ("test_shuffled_folds_cut_the_seeded_permutation", "test_folds_partition_the_examples")


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed + fold))
    else:
        order = torch.arange(n)
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    stop = start + size + (1 if fold < extra else 0)
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
