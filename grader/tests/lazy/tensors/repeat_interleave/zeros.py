"""Do-nothing: zeros of the right shape and dtype."""

import torch


def repeat_interleave(x, repeats, dim=None):
    src = x.flatten() if dim is None else x
    d = 0 if dim is None else dim % max(x.dim(), 1)
    total = (int(repeats) * src.shape[d] if not isinstance(repeats, torch.Tensor)
             else int(repeats.sum()) * (src.shape[d] if repeats.numel() == 1 else 1))
    shape = list(src.shape)
    shape[d] = total
    return torch.zeros(shape, dtype=x.dtype)
