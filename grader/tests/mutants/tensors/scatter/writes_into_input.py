"""Mistake: scatter assigns into input itself (no clone), so the caller's tensor changes:
that is scatter_, not the out-of-place scatter."""

import torch

CAUGHT_BY = ("test_scatter_leaves_input_unchanged",)


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


def _grids(index, dim):
    grids = list(torch.meshgrid(*[torch.arange(n, device=index.device) for n in index.shape],
                                indexing="ij"))
    grids[dim] = index.long()
    return tuple(grids)


def gather(input, dim, index):
    dim = _check(input, dim, index)
    return input[_grids(index, dim)]


def scatter(input, dim, index, src):
    dim = _check(input, dim, index)
    if isinstance(src, torch.Tensor):
        if src.dim() != index.dim() or any(i > n for i, n in zip(index.shape, src.shape)):
            raise ValueError("index larger than src")
        if src.dtype != input.dtype:
            raise ValueError("src dtype differs")
        src = src[tuple(slice(0, n) for n in index.shape)]
    input[_grids(index, dim)] = src
    return input
