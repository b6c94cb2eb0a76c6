"""An independent correct kfold_indices, written from the stub's docstring alone (never the
reference): the fold's first and last position worked out by arithmetic, then slices."""

import torch


def _bounds(n, k, fold):
    base, extra = divmod(n, k)
    start = fold * base + min(fold, extra)
    return start, start + base + (1 if fold < extra else 0)


def kfold_indices(n, k, fold, shuffle=False, seed=0):
    problems = []
    if k < 2:
        problems.append(f"k={k} is below 2")
    if k > n:
        problems.append(f"k={k} exceeds n={n}")
    if fold < 0 or fold >= k:
        problems.append(f"fold={fold} is not one of 0..{k - 1}")
    if problems:
        raise ValueError("; ".join(problems))
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)) if shuffle \
        else torch.arange(n, dtype=torch.int64)
    lo, hi = _bounds(n, k, fold)
    return torch.cat([perm[:lo], perm[hi:]]), perm[lo:hi].clone()
