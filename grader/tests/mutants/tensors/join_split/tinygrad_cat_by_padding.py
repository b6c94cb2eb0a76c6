"""Mistake: cat as tinygrad writes it, with no legacy rule: every tensor is padded with
zeros to the result's size along dim, at its own offset, and the padded tensors are summed.
The values are right wherever the shapes agree, but a 1-D tensor of shape (0,) among 2-D ones
(the ``out = torch.tensor([])`` accumulator) is refused instead of skipped.

Provenance: tinygrad/tinygrad, tinygrad/mixin/op.py (commit
a9069c177a9da9cca18593edf55acd2e6073cca6): ``cat`` checks every argument has self's number
of dims and sizes outside ``dim`` (an ``assert``), stacks and flattens when all sizes along
``dim`` agree, and otherwise pads each tensor by its running offset (``itertools.accumulate``
of the sizes) and sums them. Rewritten here with ``torch.nn.functional.pad`` on a float copy
and the spec's ValueError for the shapes (no code copied).
"""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_cat_skips_empty_1d_tensors",)


def _wrap(dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexError(f"dim {dim} out of range (expected in [{-ndim}, {ndim - 1}])")
    return dim % ndim


def stack(tensors, dim=0):
    if len(tensors) == 0:
        raise ValueError("stack needs at least one tensor")
    shape = tuple(tensors[0].shape)
    if any(tuple(t.shape) != shape for t in tensors):
        raise ValueError("stack needs tensors of one shape")
    d = _wrap(dim, len(shape) + 1)
    out = torch.empty((*shape[:d], len(tensors), *shape[d:]), dtype=tensors[0].dtype)
    for i, t in enumerate(tensors):
        out.select(d, i).copy_(t)
    return out


def cat(tensors, dim=0):
    if len(tensors) == 0 or any(t.dim() == 0 for t in tensors):
        raise ValueError("cat needs tensors of at least one dim")
    first = tensors[0]
    d = _wrap(dim, first.dim())
    for t in tensors[1:]:
        if t.dim() != first.dim() or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != d):
            raise ValueError(f"cat needs equal sizes outside dim {d}")
    ends = list(itertools.accumulate((t.shape[d] for t in tensors), initial=0))
    total = None
    for i, t in enumerate(tensors):
        # F.pad counts dims from the last: (before, after) pairs, the last dim's first
        widths = [0, 0] * (t.dim() - 1 - d) + [ends[i], ends[-1] - ends[i + 1]]
        padded = F.pad(t.to(torch.float64), widths)
        total = padded if total is None else total + padded
    return total.to(first.dtype)


def _pieces(x, sizes, d):
    pieces, start = [], 0
    for s in sizes:
        pieces.append(x.narrow(d, start, s))
        start += s
    return tuple(pieces)


def split(x, split_size_or_sections, dim=0):
    if x.dim() == 0:
        raise ValueError("split needs a tensor of at least one dim")
    d = _wrap(dim, x.dim())
    n = x.shape[d]
    how = split_size_or_sections
    if isinstance(how, int):
        if how < 0 or (how == 0 and n):
            raise ValueError(f"bad split_size {how}")
        if how == 0 or n == 0:
            return (x.narrow(d, 0, n),)
        return _pieces(x, [min(how, n - s) for s in range(0, n, how)], d)
    if any(s < 0 for s in how) or sum(how) != n:
        raise ValueError(f"bad sections {how}")
    return _pieces(x, how, d)


def chunk(x, chunks, dim=0):
    if chunks < 1 or x.dim() == 0:
        raise ValueError("chunk needs chunks >= 1 and a tensor of at least one dim")
    d = _wrap(dim, x.dim())
    n = x.shape[d]
    if n == 0:
        return _pieces(x, [0] * chunks, d)
    return split(x, -(-n // chunks), d)
