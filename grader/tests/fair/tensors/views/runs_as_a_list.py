"""Right, written another way: the runs of x are listed first, as (elements, base stride)
from the last dim, then the new dims are walked from the right, each taking elements of the
current run (a size-1 dim staying with it) and moving on to the next run only when one is
full. Strides come back as a ``torch.Size``, torch's own tuple type, and a list's order
(for dims) is read as any sequence."""

from __future__ import annotations

import math

import torch


def _check(size, stride):
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    if min(size, default=0) < 0:
        raise ValueError(f"a size is negative: {tuple(size)}")


def _resolved(shape, count):
    shape = list(shape)
    holes = shape.count(-1)
    if holes > 1 or any(n < -1 for n in shape):
        raise ValueError(f"shape {tuple(shape)}: one -1 at most, and no size below -1")
    rest = math.prod(n for n in shape if n != -1)
    if holes:
        if rest == 0 or count % rest != 0:
            raise ValueError(f"shape {tuple(shape)} cannot hold {count} elements")
        shape[shape.index(-1)] = count // rest
    if math.prod(shape) != count:
        raise ValueError(f"shape {tuple(shape)} cannot hold {count} elements")
    return shape


def _runs(size, stride):
    """[(elements, base)] from the last dim: a dim joins the run on its right when its
    size is 1 or its stride jumps exactly over that run."""
    runs: list[tuple[int, int]] = []
    for n, s in zip(reversed(size), reversed(stride)):
        if runs and (n == 1 or s == runs[-1][0] * runs[-1][1]):
            runs[-1] = (runs[-1][0] * n, runs[-1][1])
        else:
            runs.append((n, s))
    return runs


def view_strides(size, stride, shape):
    _check(size, stride)
    count = math.prod(size)
    shape = _resolved(shape, count)
    if len(size) == 0:
        return torch.Size([1] * len(shape))
    if count == 0:
        if shape == list(size):
            return torch.Size(stride)
        out, step = [], 1
        for n in shape[::-1]:
            out.append(step)
            step *= max(n, 1)
        return torch.Size(out[::-1])
    runs = _runs(size, stride)
    r, taken = 0, 1
    out = [0] * len(shape)
    for j in range(len(shape) - 1, -1, -1):
        if shape[j] != 1:
            while taken == runs[r][0]:  # this run is full: the next one
                r, taken = r + 1, 1
                if r == len(runs):
                    return None
        out[j] = runs[r][1] * taken
        taken *= shape[j]
        if taken > runs[r][0]:  # a new dim would join two runs
            return None
    if taken != runs[r][0] or any(n != 1 for n, _ in runs[r + 1:]):
        return None
    return torch.Size(out)


def _dim(d, ndim):
    places = ndim or 1
    if d >= places or d < -places:
        raise IndexError(f"dim {d} is out of range for {ndim} dims")
    return d + places if d < 0 else d


def permute_strides(size, stride, dims):
    _check(size, stride)
    dims = list(dims)
    if len(dims) != len(size):
        raise ValueError(f"{len(dims)} dims for a {len(size)}-d tensor")
    order = [_dim(d, len(size)) for d in dims]
    if sorted(order) != list(range(len(size))):
        raise ValueError(f"dims {tuple(dims)} is no permutation")
    return torch.Size([stride[d] for d in order])


def squeeze_strides(size, stride, dim):
    _check(size, stride)
    if dim is None:
        keep = [d for d, n in enumerate(size) if n != 1]
    else:
        d = _dim(dim, len(size))
        keep = [k for k in range(len(size)) if not (k == d and size[k] == 1)]
    return torch.Size([stride[k] for k in keep])
