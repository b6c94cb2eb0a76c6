"""Mistake: builds the coordinate grid over input.shape instead of index.shape, so an index
smaller than the input (or longer along dim) breaks; and scatter uses the whole src even
when it is larger than index."""

import torch

CAUGHT_BY = ("test_gather_matches_torch", "test_scatter_matches_torch")


def _check(input, dim, index):
    if index.dtype not in (torch.int64, torch.int32):
        raise ValueError("index must be int64 or int32")
    if index.dim() != input.dim():
        raise ValueError("index and input differ in number of dims")
    if not -input.dim() <= dim < input.dim():
        raise IndexError(f"dim {dim} out of range")
    dim %= input.dim()
    for d in range(input.dim()):
        if d != dim and index.size(d) > input.size(d):
            raise ValueError("index larger than input")
    if index.numel() and (index.min() < 0 or index.max() >= input.size(dim)):
        raise ValueError("index out of range")
    return dim


def _grids(input, index, dim):
    grids = list(torch.meshgrid(*[torch.arange(n) for n in input.shape], indexing="ij"))
    grids[dim] = index.long()
    return tuple(grids)


def gather(input, dim, index):
    dim = _check(input, dim, index)
    return input[_grids(input, index, dim)]


def scatter(input, dim, index, src):
    dim = _check(input, dim, index)
    if isinstance(src, torch.Tensor) and src.dtype != input.dtype:
        raise ValueError("src dtype differs")
    out = input.clone()
    out[_grids(input, index, dim)] = src
    return out
