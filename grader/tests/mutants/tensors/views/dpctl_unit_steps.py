"""Mistake: finds each new dim's stride as the memory step of one unit step along it, and
accepts the view when stepping back along each old dim lands where its stride says. That
decides whether a view exists as torch does, but it gives a new dim of size 1 the step 0
(a unit step along it is no step), and a tensor with no elements the strides (1, 1, ...),
where torch gives real strides by its run rule.

Provenance: IntelPython/dpctl, dpctl/tensor/_reshape.py (commit
c994666251c564f544c976be1dba72033941d543): ``reshaped_strides(old_sh, old_sts, new_sh)``
turns the unit vector of each new dim (zero for a size-1 dim) into a flat index with
``ravel_multi_index`` and that into an offset in the old layout with ``unravel_index``, then
checks the old strides the same way back (size-1 old dims excused); ``reshape`` infers the
-1, and for an array with no elements uses strides of 1. Rewritten here with plain integer
arithmetic (no code copied).
"""

from __future__ import annotations

CAUGHT_BY = ("test_size_one_dims_of_the_view", "test_empty_tensors_always_have_a_view")


def _check_layout(size, stride):
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    if any(n < 0 for n in size):
        raise ValueError(f"sizes must be non-negative, got {tuple(size)}")


def _numel(size):
    count = 1
    for n in size:
        count *= n
    return count


def _infer(shape, numel):
    if list(shape).count(-1) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"shape {tuple(shape)}: at most one -1, no size below it")
    known = -_numel(shape) if -1 in shape else _numel(shape)
    if -1 in shape:
        if known == 0 or numel % known:
            raise ValueError(f"cannot infer the -1 of {tuple(shape)} for {numel} elements")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    if _numel(shape) != numel:
        raise ValueError(f"shape {tuple(shape)} does not hold {numel} elements")
    return tuple(shape)


def _flat_of_unit_step(d, shape):
    """The row-major flat index of the unit vector along dim d (0 for a size-1 dim)."""
    if shape[d] <= 1:
        return 0
    return _numel(shape[d + 1:])


def _offset_of_flat(flat, shape, stride):
    """Where the element at row-major flat index ``flat`` lies, in a layout."""
    offset = 0
    for n, s in zip(reversed(shape), reversed(stride)):
        flat, index = divmod(flat, n)
        offset += index * s
    return offset


def view_strides(size, stride, shape):
    _check_layout(size, stride)
    shape = _infer(shape, _numel(size))
    if _numel(size) == 0:
        return (1,) * len(shape)
    new = tuple(_offset_of_flat(_flat_of_unit_step(d, shape), size, stride) for d in range(len(shape)))
    back = [_offset_of_flat(_flat_of_unit_step(d, size), shape, new) for d in range(len(size))]
    if all(b == s or n == 1 for b, s, n in zip(back, stride, size)):
        return new
    return None


def _wrap(dim, ndim):
    top = max(ndim, 1)
    if not -top <= dim < top:
        raise IndexError(f"dim {dim} out of range for a {ndim}-d tensor")
    return dim % top


def permute_strides(size, stride, dims):
    _check_layout(size, stride)
    if len(dims) != len(size):
        raise ValueError(f"dims {tuple(dims)} has {len(dims)} entries for a {len(size)}-d tensor")
    order = [_wrap(d, len(size)) for d in dims]
    if len(set(order)) != len(order):
        raise ValueError(f"dims {tuple(dims)} repeats a dim")
    return tuple(stride[d] for d in order)


def squeeze_strides(size, stride, dim):
    _check_layout(size, stride)
    if dim is None:
        return tuple(s for n, s in zip(size, stride) if n != 1)
    d = _wrap(dim, len(size))
    if not size or size[d] != 1:
        return tuple(stride)
    return tuple(stride[:d]) + tuple(stride[d + 1:])
