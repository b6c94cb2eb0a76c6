"""Mistake: hands the numbers to torch's own Python copy of its view-stride rule
(``torch._subclasses.fake_impls._compute_stride``, what fake tensors use) instead of working
out the runs: the route ``torchdrill audit`` finds, which answers every example right."""

from __future__ import annotations

from torch._subclasses.fake_impls import _compute_stride

CAUGHT_BY = ("test_view_strides_match_torch",)


def _check_layout(size, stride):
    if len(size) != len(stride) or any(n < 0 for n in size):
        raise ValueError(f"bad layout: size {tuple(size)}, stride {tuple(stride)}")


def _numel(size):
    count = 1
    for n in size:
        count *= n
    return count


def view_strides(size, stride, shape):
    _check_layout(size, stride)
    numel = _numel(size)
    if list(shape).count(-1) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"bad shape {tuple(shape)}")
    known = _numel([n for n in shape if n != -1])
    if -1 in shape:
        if known == 0 or numel % known:
            raise ValueError(f"bad shape {tuple(shape)}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    if _numel(shape) != numel:
        raise ValueError(f"bad shape {tuple(shape)}")
    found = _compute_stride(list(size), list(stride), list(shape))
    return None if found is None else tuple(int(s) for s in found)


def _wrap(dim, ndim):
    top = max(ndim, 1)
    if not -top <= dim < top:
        raise IndexError(f"dim {dim} out of range")
    return dim % top


def permute_strides(size, stride, dims):
    _check_layout(size, stride)
    if len(dims) != len(size):
        raise ValueError("wrong number of dims")
    order = [_wrap(d, len(size)) for d in dims]
    if len(set(order)) != len(order):
        raise ValueError("a dim comes twice")
    return tuple(stride[d] for d in order)


def squeeze_strides(size, stride, dim):
    _check_layout(size, stride)
    if dim is None:
        return tuple(s for n, s in zip(size, stride) if n != 1)
    d = _wrap(dim, len(size))
    if not size or size[d] != 1:
        return tuple(stride)
    return tuple(stride[:d]) + tuple(stride[d + 1:])
