"""Mistake: a 1-element repeats tensor is taken as one count per slice, so it is refused
as the wrong length instead of applying to every slice as torch does."""

import torch

CAUGHT_BY = ("test_one_count_tensor_repeats_every_slice",)


def repeat_interleave(x, repeats, dim=None):
    if dim is None:
        x, dim = x.flatten(), 0
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} out of range")
    n = x.size(dim)
    if isinstance(repeats, torch.Tensor):
        counts = repeats.reshape(-1).to(x.device, torch.int64)
        if counts.numel() != n:
            raise ValueError(f"repeats has {counts.numel()} counts for {n} slices")
    else:
        counts = torch.full((n,), repeats, dtype=torch.int64, device=x.device)
    if counts.numel() and counts.min() < 0:
        raise ValueError("negative count")
    ends = counts.cumsum(0)
    total = int(ends[-1]) if n else 0
    positions = torch.arange(total, device=x.device)
    return x.index_select(dim, torch.searchsorted(ends, positions, right=True))
