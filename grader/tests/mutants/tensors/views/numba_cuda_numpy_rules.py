"""Mistake: numpy's rules, as numba-cuda's array model keeps them. The view is found by
numpy's no-copy reshape: size-1 dims of x are dropped first, the rest matched group by group,
and every size-1 dim the new shape has after the last group copies the stride before it; an
array contiguous in either order (numpy's flags) gets the row-major strides of the new shape
whatever its own, and the same shape keeps its strides. And ``squeeze(dim)`` of a dim whose size is not 1
raises, as numpy's ``squeeze(axis)`` does. Whether a view exists comes out as torch says; the
strides of new size-1 dims and numpy's error do not.

Provenance: NVIDIA/numba-cuda, numba_cuda/numba/cuda/cudadrv/dummyarray.py (commit
f4c15c70da784ccafa24f209aae90909ffdedbf1): ``attempt_nocopy_reshape`` (a port of numpy's
``_attempt_nocopy_reshape``), ``Array.reshape`` (the same shape returns the array, a C- or
F-contiguous one gets ``iter_strides_c_contig`` of the new shape) and ``Array.squeeze`` ("cannot select an axis to squeeze out
which has size not equal to one"). Rewritten here for element strides and the spec's errors
(no code copied).
"""

from __future__ import annotations

CAUGHT_BY = ("test_size_one_dims_of_the_view", "test_squeeze_dim_matches_torch")


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
    unknown = [d for d, n in enumerate(shape) if n < 0]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"shape {tuple(shape)}: at most one unknown dim, written -1")
    if unknown:
        known = _numel([n for n in shape if n >= 0])
        if known == 0 or numel % known:
            raise ValueError(f"cannot infer the unknown dim of {tuple(shape)} for {numel} elements")
        shape = tuple(numel // known if n < 0 else n for n in shape)
    if _numel(shape) != numel:
        raise ValueError(f"shape {tuple(shape)} does not hold {numel} elements")
    return tuple(shape)


def _row_major(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _c_or_f_contiguous(size, stride):
    """numpy's flags: either order counts, size-1 dims are skipped, no elements is both,
    a stride 0 neither."""
    if 0 in size:
        return True
    if any(s == 0 for s in stride):
        return False
    for order in (list(zip(reversed(size), reversed(stride))), list(zip(size, stride))):
        expected, ok = 1, True
        for n, s in order:
            if n != 1:
                ok = ok and s == expected
                expected *= n
        if ok:
            return True
    return False


def view_strides(size, stride, shape):
    _check_layout(size, stride)
    shape = _infer(shape, _numel(size))
    if shape == tuple(size):  # the same shape: the array itself
        return tuple(stride)
    if _c_or_f_contiguous(size, stride):  # row-major strides for the new shape
        return _row_major(shape)
    if not size or _numel(shape) == 0:
        return (1,) * len(shape)
    old = [(n, s) for n, s in zip(size, stride) if n != 1]
    new = [0] * len(shape)
    oi = ni = 0
    while ni < len(shape) and oi < len(old):
        # grow a group on each side until both hold the same number of elements
        oj, nj = oi + 1, ni + 1
        old_count, new_count = old[oi][0], shape[ni]
        while old_count != new_count:
            if new_count < old_count:
                new_count *= shape[nj]
                nj += 1
            else:
                old_count *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the old dims of the group must be one run
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new[k - 1] = new[k] * shape[k]
        oi, ni = oj, nj
    last = new[ni - 1] if ni else 1
    for k in range(ni, len(shape)):  # size-1 dims after the last group
        new[k] = last
    return tuple(new)


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
    if not size:
        return ()
    if size[d] != 1:
        raise ValueError(f"cannot squeeze dim {dim}: its size is {size[d]}, not 1")
    return tuple(stride[:d]) + tuple(stride[d + 1:])
