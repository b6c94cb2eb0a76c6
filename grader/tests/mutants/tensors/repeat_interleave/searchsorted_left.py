"""Mistake: searchsorted without right=True: position j == ends[i] is sent to slice i
instead of i + 1, so each slice's last copy (and every slice after a zero count) is wrong."""

import torch

CAUGHT_BY = ("test_int_repeats_match_torch", "test_tensor_repeats_match_torch")


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
        elif counts.numel() != n:
            raise ValueError("repeats has the wrong length")
    else:
        counts = torch.full((n,), repeats, dtype=torch.int64, device=x.device)
    if counts.numel() and counts.min() < 0:
        raise ValueError("negative count")
    ends = counts.cumsum(0)
    total = int(ends[-1]) if n else 0
    positions = torch.arange(total, device=x.device)
    source = torch.searchsorted(ends, positions).clamp(max=max(n - 1, 0))
    return x.index_select(dim, source)
