"""Mistake: calls the forbidden F.max_pool2d / F.avg_pool2d instead of sliding the
window itself (and swallows the guard's refusal, which must not help)."""

import torch.nn.functional as F

CAUGHT_BY = ("test_max_pool_matches_f_max_pool2d", "test_avg_pool_matches_f_avg_pool2d")


def pool2d(x, kernel, stride=None, padding=0, mode="max"):
    if mode not in ("max", "avg"):
        raise ValueError("mode must be 'max' or 'avg'")
    pool = F.max_pool2d if mode == "max" else F.avg_pool2d
    try:
        return pool(x, kernel, stride, padding)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
