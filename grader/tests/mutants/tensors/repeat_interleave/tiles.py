"""Mistake: tiles instead of interleaving: [a, b] with repeats 2 gives [a, b, a, b] (what
Tensor.repeat does), and a tensor of counts repeats whole blocks in the wrong order."""

import torch

CAUGHT_BY = ("test_int_repeats_match_torch", "test_tensor_repeats_match_torch")


def repeat_interleave(x, repeats, dim=None):
    if dim is None:
        x, dim = x.flatten(), 0
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} out of range")
    n = x.size(dim)
    if isinstance(repeats, torch.Tensor):
        counts = repeats.reshape(-1).long()
        if counts.numel() == 1:
            counts = counts.expand(n)
        elif counts.numel() != n:
            raise ValueError("repeats has the wrong length")
    else:
        counts = torch.full((n,), repeats, dtype=torch.int64)
    if counts.numel() and counts.min() < 0:
        raise ValueError("negative count")
    rounds = int(counts.max()) if n else 0
    picks = [i for r in range(rounds) for i in range(n) if counts[i] > r]
    return x.index_select(dim, torch.tensor(picks, dtype=torch.int64, device=x.device))
