"""Do-nothing: zero tensors of the right shapes and dtypes (for split and chunk, zero pieces of
torch's sizes, in a tuple)."""

import torch


def _wrap(dim, ndim):
    return dim % ndim if ndim else 0


def stack(tensors, dim=0):
    shape = list(tensors[0].shape)
    shape.insert(_wrap(dim, len(shape) + 1), len(tensors))
    return torch.zeros(shape, dtype=tensors[0].dtype)


def cat(tensors, dim=0):
    kept = [t for t in tensors if tuple(t.shape) != (0,)] or [tensors[0]]
    d = _wrap(dim, kept[0].dim())
    shape = list(kept[0].shape)
    shape[d] = sum(t.shape[d] for t in kept)
    return torch.zeros(shape, dtype=kept[0].dtype)


def _sizes(n, how):
    if isinstance(how, int):
        return [min(how, n - i) for i in range(0, n, how)] if how and n else [n]
    return list(how)


def split(x, split_size_or_sections, dim=0):
    d = _wrap(dim, x.dim())
    pieces = []
    for size in _sizes(x.shape[d], split_size_or_sections):
        shape = list(x.shape)
        shape[d] = size
        pieces.append(torch.zeros(shape, dtype=x.dtype))
    return tuple(pieces)


def chunk(x, chunks, dim=0):
    d = _wrap(dim, x.dim())
    n = x.shape[d]
    return split(x, -(-n // chunks) if n else [0] * chunks, d)
