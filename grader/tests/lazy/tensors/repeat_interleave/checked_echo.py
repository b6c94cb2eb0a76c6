"""Do-nothing with the spec's checks: IndexError for dim, ValueError for negative counts
and a repeats tensor of the wrong length; otherwise x flattened (dim None) or x itself."""

import torch


def repeat_interleave(x, repeats, dim=None):
    if dim is not None and not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        raise IndexError("dim out of range")
    slices = x.numel() if dim is None else x.shape[dim]
    if isinstance(repeats, torch.Tensor):
        if repeats.numel() not in (1, slices):
            raise ValueError("wrong number of counts")
        if repeats.numel() and int(repeats.min()) < 0:
            raise ValueError("negative count")
    elif repeats < 0:
        raise ValueError("negative count")
    return x.flatten() if dim is None else x
