"""Mistake: calls torch.manual_seed(seed) before torch.randperm(n). The folds are right, but
the call resets the caller's global random state (dropout masks, data order, init)."""

import torch

CAUGHT_BY = ("test_global_random_state_is_untouched",)


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    if k < 2 or k > n or not 0 <= fold < k:
        raise ValueError(f"bad k-fold arguments: n={n}, k={k}, fold={fold}")
    if shuffle:
        torch.manual_seed(seed)
        order = torch.randperm(n)
    else:
        order = torch.arange(n)
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    stop = start + size + (1 if fold < extra else 0)
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
