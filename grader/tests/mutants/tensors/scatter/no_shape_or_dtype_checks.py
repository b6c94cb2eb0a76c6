"""Mistake: checks only the index range; an index larger than the input or src, an index
with an extra dim, a float index or a src of another dtype slip through (advanced
indexing raises IndexError, or casts src silently) instead of the ValueError asked for."""

import torch

CAUGHT_BY = ("test_index_shape_mismatch_raises_value_error", "test_wrong_dtypes_raise_value_error")


def _grids(index, dim):
    grids = list(torch.meshgrid(*[torch.arange(n, device=index.device) for n in index.shape],
                                indexing="ij"))
    grids[dim] = index.long()
    return tuple(grids)


def _check(input, dim, index):
    if not -input.dim() <= dim < input.dim():
        raise IndexError(f"dim {dim} out of range")
    dim %= input.dim()
    if index.numel() and (index.min() < 0 or index.max() >= input.size(dim)):
        raise ValueError("index out of range")
    return dim


def gather(input, dim, index):
    dim = _check(input, dim, index)
    return input[_grids(index, dim)]


def scatter(input, dim, index, src):
    dim = _check(input, dim, index)
    if isinstance(src, torch.Tensor):
        src = src[tuple(slice(0, n) for n in index.shape)]
    out = input.clone()
    out[_grids(index, dim)] = src
    return out
