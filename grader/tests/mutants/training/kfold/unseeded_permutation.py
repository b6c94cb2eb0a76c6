"""Mistake: shuffles with an unseeded torch.randperm(n), so each call (each fold) cuts a
different permutation: the folds of one run overlap and miss examples, and the global
random state moves."""

import torch

CAUGHT_BY = ("test_shuffled_folds_cut_the_seeded_permutation", "test_folds_partition_the_examples",
             "test_global_random_state_is_untouched")


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    order = torch.randperm(n) if shuffle else torch.arange(n)
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    stop = start + size + (1 if fold < extra else 0)
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
