"""Mistake: refuses k < 1 instead of k < 2, so k == 1 is accepted: one fold holds every
example for validation and nothing is left to train on (the spec: ValueError if k < 2)."""

import torch

CAUGHT_BY = ("test_bad_arguments_raise_value_error",)


def _check(n: int, k: int, fold: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 2, got {k}")
    if k > n:
        raise ValueError(f"cannot cut {n} examples into {k} non-empty folds")
    if not 0 <= fold < k:
        raise ValueError(f"fold must be in [0, {k}), got {fold}")


def fold_bounds(n: int, k: int, fold: int) -> tuple[int, int]:
    """Start and stop of ``fold``: the first ``n % k`` folds are one longer."""
    size, extra = divmod(n, k)
    start = fold * size + min(fold, extra)
    return start, start + size + (1 if fold < extra else 0)


def kfold_indices(n: int, k: int, fold: int, shuffle: bool = False,
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    _check(n, k, fold)
    if shuffle:
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    else:
        order = torch.arange(n)
    start, stop = fold_bounds(n, k, fold)
    return torch.cat([order[:start], order[stop:]]), order[start:stop]
