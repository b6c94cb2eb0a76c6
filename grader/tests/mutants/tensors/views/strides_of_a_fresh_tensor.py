"""Mistake: "a view is only a new shape": whenever the element counts agree, answers the
row-major strides of the shape, as if x were contiguous. A transposed tensor flattened, rows
with gaps between them, a stride-0 expand: no view exists there, and their views that do
exist have other strides."""

from __future__ import annotations

import math

CAUGHT_BY = ('test_no_view_when_a_dim_joins_two_runs', 'test_view_strides_match_torch')


def _check_layout(size: tuple[int, ...], stride: tuple[int, ...]) -> None:
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    if any(n < 0 for n in size):
        raise ValueError(f"sizes must be non-negative, got {tuple(size)}")


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """``shape`` with its -1 (if any) replaced by the size that makes ``numel`` elements."""
    unknown = [d for d, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError(f"shape {tuple(shape)} has more than one -1")
    if any(n < -1 for n in shape):
        raise ValueError(f"shape {tuple(shape)} has a size below -1")
    known = math.prod(n for n in shape if n != -1)
    if unknown:
        if known == 0:
            raise ValueError(f"shape {tuple(shape)}: the -1 is ambiguous (or impossible) "
                             f"beside a size 0, for {numel} elements")
        if numel % known:
            raise ValueError(f"shape {tuple(shape)} is invalid for {numel} elements")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    if math.prod(shape) != numel:
        raise ValueError(f"shape {tuple(shape)} is invalid for {numel} elements")
    return tuple(shape)


def view_strides(size: tuple[int, ...], stride: tuple[int, ...],
                 shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides of ``x.view(shape)``, or None when no view of ``x`` has that shape.

    The dims of ``x`` fall into runs, from the last dim backwards, of dims that are
    contiguous with each other (one step along a dim jumps exactly over the run after
    it; size-1 dims never break a run). A view may regroup the elements of a run
    freely, but never join two runs. Each run hands its elements to the new dims
    from the right, with strides counted from the stride of the run's last dim.
    """
    _check_layout(size, stride)
    numel = math.prod(size)
    shape = _infer_shape(shape, numel)
    if not size:  # a 0-d tensor: any shape of ones, all strides 1
        return (1,) * len(shape)
    if numel == 0:  # nothing to lay out: the same shape keeps its strides
        if shape == tuple(size):
            return tuple(stride)
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        return tuple(reversed(strides))

    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
    new: list[int] = []  # never reached
    base = stride[-1]  # the stride of the run's last dim
    run = 1  # elements of the run so far
    for d in range(len(size) - 1, -1, -1):
        run *= size[d]
        ends_here = d == 0 or (size[d - 1] != 1 and stride[d - 1] != run * base)
        if not ends_here:
            continue
        taken = 1  # elements of the run the new dims have taken
        while len(new) < len(shape) and (taken < run or shape[-1 - len(new)] == 1):
            new.append(taken * base)
            taken *= shape[-len(new)]
        if taken != run:
            return None
        base, run = stride[d - 1], 1  # the next run's (read at d == 0 too, where the loop ends)
    if len(new) != len(shape):
        return None
    return tuple(reversed(new))


def _wrap(dim: int, ndim: int) -> int:
    """``dim`` counted from the front, for a tensor of ``ndim`` dims (0-d counts as 1)."""
    top = max(ndim, 1)
    if not -top <= dim < top:
        raise IndexError(f"dim {dim} out of range for a {ndim}-d tensor")
    return dim % top


def permute_strides(size: tuple[int, ...], stride: tuple[int, ...],
                    dims: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of ``x.permute(dims)``: each dim keeps its stride, in the new order."""
    _check_layout(size, stride)
    if len(dims) != len(size):
        raise ValueError(f"dims {tuple(dims)} has {len(dims)} entries for a {len(size)}-d tensor")
    order = [_wrap(d, len(size)) for d in dims]
    if len(set(order)) != len(order):
        raise ValueError(f"dims {tuple(dims)} repeats a dim")
    return tuple(stride[d] for d in order)


def squeeze_strides(size: tuple[int, ...], stride: tuple[int, ...],
                    dim: int | None) -> tuple[int, ...]:
    """The strides of ``x.squeeze(dim)`` (``x.squeeze()`` when ``dim`` is None)."""
    _check_layout(size, stride)
    if dim is None:
        return tuple(s for n, s in zip(size, stride) if n != 1)
    d = _wrap(dim, len(size))
    if not size or size[d] != 1:
        return tuple(stride)
    return tuple(stride[:d]) + tuple(stride[d + 1:])
