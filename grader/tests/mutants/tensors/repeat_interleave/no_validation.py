"""Mistake: no checks on repeats: a negative count or a repeats tensor of the wrong length
gives a torch RuntimeError (or a silently wrong result) instead of a ValueError."""

import torch

CAUGHT_BY = ("test_negative_count_raises_value_error",
             "test_wrong_number_of_counts_raises_value_error")


def repeat_interleave(x, repeats, dim=None):
    if dim is None:
        x, dim = x.flatten(), 0
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} out of range")
    n = x.size(dim)
    if isinstance(repeats, torch.Tensor):
        counts = repeats.reshape(-1).to(x.device, torch.int64)
        if counts.numel() == 1:
            counts = counts.expand(n)
    else:
        counts = torch.full((n,), repeats, dtype=torch.int64, device=x.device)
    ends = counts.cumsum(0)
    total = int(ends[-1]) if n else 0
    positions = torch.arange(max(total, 0), device=x.device)
    return x.index_select(dim, torch.searchsorted(ends, positions, right=True).clamp(max=max(n - 1, 0)))
