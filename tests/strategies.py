"""Shared hypothesis strategies for the drills' property tests.

Tensors are drawn from hypothesis' own numpy strategies, so a failing input
shrinks towards small shapes and simple values (zeros, ones) and the report
shows the smallest case that breaks a submission.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.testing import wide, widened


def reusable(factory: Callable[..., st.SearchStrategy]) -> Callable[..., st.SearchStrategy]:
    """Build each strategy once per set of arguments and hand the same object back.

    hypothesis validates a strategy object (and works out whether it can be empty,
    reuse values, ...) the first time it is drawn from. Composites that build
    ``float_tensors(shape)`` afresh on every draw paid that on every example, a large
    share of grading the reference. Strategies are immutable, so sharing them changes
    no draw. Arguments must be hashable (tuples, dtypes, strategies).
    """
    cached = functools.lru_cache(maxsize=4096)(lambda _widened, *args, **kwargs: factory(*args, **kwargs))

    @functools.wraps(factory)
    def build(*args, **kwargs):
        return cached(widened(), *args, **kwargs)  # the public and the official ranges apart
    return build


sampled = reusable(st.sampled_from)
sampled.__doc__ = "``st.sampled_from`` of a tuple, built once per tuple (see ``reusable``)."

TORCH_TO_NUMPY = {torch.float64: np.float64, torch.float32: np.float32,
                  torch.int64: np.int64, torch.int32: np.int32, torch.int16: np.int16,
                  torch.int8: np.int8, torch.uint8: np.uint8, torch.bool: np.bool_}


@reusable
def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0,
           max_side: int = 5) -> st.SearchStrategy[tuple[int, ...]]:
    """Tensor shapes; sides may be 0 unless ``min_side`` says otherwise. An official
    grading draws longer sides (``wide``)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                            min_side=min_side, max_side=wide(max_side))


@reusable
def float_tensors(shape, dtype: torch.dtype = torch.float64, low: float = -10.0,
                  high: float = 10.0) -> st.SearchStrategy[torch.Tensor]:
    """Finite floats in [low, high] of a given shape (or a shape strategy)."""
    np_dtype = TORCH_TO_NUMPY[dtype]
    width = 64 if dtype == torch.float64 else 32
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)
    return hnp.arrays(np_dtype, shape, elements=elements).map(lambda a: torch.from_numpy(a.copy()))


@reusable
def int_tensors(shape, low: int, high: int,
                dtype: torch.dtype = torch.int64) -> st.SearchStrategy[torch.Tensor]:
    """Integers in [low, high] of a given shape (or a shape strategy)."""
    np_dtype = TORCH_TO_NUMPY[dtype]
    return hnp.arrays(np_dtype, shape, elements=st.integers(low, high)).map(
        lambda a: torch.from_numpy(a.copy()))


def row_major_strides(size: tuple[int, ...]) -> tuple[int, ...]:
    """What ``torch.empty(size).stride()`` gives (size-0 dims count as 1)."""
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


@st.composite
def strided_layouts(draw, max_dims: int = 4, max_side: int = 4) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(size, stride) pairs from the layouts the notes discuss.

    Contiguous, permuted (``transpose``/``permute``), sliced (with a step, or narrowed),
    expanded (stride 0 on broadcast dims), with size-0 and size-1 dims, and raw
    ``as_strided`` strides, which are mostly not contiguous.
    """
    kind = draw(st.sampled_from(["contiguous", "permuted", "sliced", "expanded",
                                 "size0", "size1", "raw"]))
    size = draw(shapes(min_dims=0 if kind == "contiguous" else 1, max_dims=max_dims,
                       min_side=1, max_side=max_side))
    if kind == "contiguous":
        return size, row_major_strides(size)
    if kind == "permuted":
        order = draw(st.permutations(range(len(size))))
        base = row_major_strides(size)
        return tuple(size[i] for i in order), tuple(base[i] for i in order)
    if kind == "sliced":  # x[::step] with a step per dim, narrowed (x[:n]) by `extra`
        steps = draw(st.lists(st.integers(1, 3), min_size=len(size), max_size=len(size)))
        extra = draw(st.lists(st.integers(0, 2), min_size=len(size), max_size=len(size)))
        full = tuple(n * s + e for n, s, e in zip(size, steps, extra))
        base = row_major_strides(full)
        return size, tuple(b * s for b, s in zip(base, steps))
    if kind == "expanded":
        base = row_major_strides(size)
        dims = draw(st.sets(st.integers(0, len(size) - 1), min_size=1))
        return size, tuple(0 if d in dims else b for d, b in enumerate(base))
    if kind == "size0":
        zero = draw(st.integers(0, len(size) - 1))
        size = tuple(0 if d == zero else n for d, n in enumerate(size))
        stride = draw(st.lists(st.integers(0, 12), min_size=len(size), max_size=len(size)))
        return size, tuple(stride)
    if kind == "size1":
        ones = draw(st.sets(st.integers(0, len(size) - 1), min_size=1))
        size = tuple(1 if d in ones else n for d, n in enumerate(size))
        base = list(row_major_strides(size))
        for d in ones:  # a size-1 dim's stride can be anything
            base[d] = draw(st.integers(0, 12))
        return size, tuple(base)
    stride = draw(st.lists(st.integers(0, 12), min_size=len(size), max_size=len(size)))
    return size, tuple(stride)


def numel(size: tuple[int, ...]) -> int:
    return math.prod(size)


# ------------------------------------------------------------------ memory layouts of values

# What ``any_layout`` draws by default: the same values, in another memory layout.
# "expanded" (stride 0) changes the values, so it is only drawn where a test asks for it.
VALUE_LAYOUTS = ("contiguous", "permuted", "sliced")


def storage_filler(dtype: torch.dtype) -> float | int | bool:
    """What fills the storage around a sliced view: NaN for floating dtypes, the dtype's
    largest value for integers, True for bool. A function that reads outside the view
    (a ``.view`` of the wrong storage, ``as_strided`` with made-up strides) then shows it."""
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def relaid(t: torch.Tensor, kind: str, *, order: tuple[int, ...] | None = None,
           steps: tuple[int, ...] | None = None, offsets: tuple[int, ...] | None = None,
           dims: tuple[int, ...] = ()) -> torch.Tensor:
    """``t``'s values in the memory layout ``kind`` (a new tensor; ``t`` is not changed).

    - "contiguous": a contiguous copy.
    - "permuted": laid out in the dim ``order`` (row-major in that order) and permuted back,
      so the shape and values are ``t``'s but the strides are permuted (2-D: the
      transposed, column-major layout ``t.mT.contiguous().mT``).
    - "sliced": every dim ``d`` taken with step ``steps[d]`` from ``offsets[d]`` out of a
      larger storage filled with ``storage_filler(dtype)`` (NaN for floats), so the view
      has gaps, a storage offset, and rubbish around it.
    - "expanded": each dim in ``dims`` (of size >= 1) becomes a stride-0 expand of its first
      slice. This CHANGES the values (they repeat along those dims): compute the oracle
      from the returned tensor. Writing into it in place raises in torch.

    ``requires_grad`` is not carried over; call ``requires_grad_()`` on the result.
    """
    t = t.detach()
    if kind == "contiguous":
        return t.clone(memory_format=torch.contiguous_format)
    if kind == "permuted":
        order = tuple(order if order is not None else reversed(range(t.dim())))
        back = tuple(sorted(range(t.dim()), key=order.__getitem__))
        return t.permute(order).contiguous().permute(back)
    if kind == "sliced":
        steps = tuple(steps if steps is not None else (2,) * t.dim())
        offsets = tuple(offsets if offsets is not None else (1,) * t.dim())
        if t.dim() == 0:  # one element at an offset of a 1-D storage
            big = torch.full((2,), storage_filler(t.dtype), dtype=t.dtype, device=t.device)
            view = big[1]
        else:
            big_shape = tuple(o + max(n, 1) * s for n, s, o in zip(t.shape, steps, offsets))
            big = torch.full(big_shape, storage_filler(t.dtype), dtype=t.dtype, device=t.device)
            view = big[tuple(slice(o, o + n * s, s) for n, s, o in zip(t.shape, steps, offsets))]
        view.copy_(t)
        return view
    if kind == "expanded":
        out = t
        for d in dims:
            if out.shape[d] >= 1:
                out = out.narrow(d, 0, 1)
        return out.clone().expand(t.shape)
    raise ValueError(f"unknown layout {kind!r}")


@reusable
def _scrambled_orders(ndim: int) -> st.SearchStrategy[list[int]]:
    """Orders of ``ndim`` dims other than the identity."""
    return st.permutations(range(ndim)).filter(lambda o: o != sorted(o))


@reusable
@st.composite
def layouts(draw, ndim: int, kinds: tuple[str, ...] = VALUE_LAYOUTS,
            label: str = "x") -> Callable[[torch.Tensor], torch.Tensor]:
    """A memory layout drawn as ``any_layout`` draws it, returned as a function that lays out
    any tensor of ``ndim`` dims that way (``relaid`` with the drawn order, steps, offsets).

    For tests that call the student several times with fresh copies of one input: a
    ``clone()`` of a sliced view comes back contiguous, so re-apply the layout instead::

        lay = draw(layouts(x.dim(), label="x"))
        impl.f(lay(x))          # a new tensor in that layout on every call
    """
    kind = draw(sampled(tuple(kinds)), label=f"layout of {label}")
    if kind == "permuted" and ndim < 2:
        kind = "sliced"
    if kind == "permuted":
        order = draw(_scrambled_orders(ndim), label=f"dim order of {label} in memory")
        return functools.partial(relaid, kind="permuted", order=tuple(order))
    if kind == "sliced":
        steps = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim),
                     label=f"steps of {label} in its storage")
        offsets = draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim),
                       label=f"offsets of {label} in its storage")
        if ndim and all(s == 1 for s in steps):  # at least one gap
            steps[-1] = 2
        return functools.partial(relaid, kind="sliced", steps=tuple(steps), offsets=tuple(offsets))
    if kind == "expanded" and ndim:
        dims = draw(st.sets(st.integers(0, ndim - 1), min_size=1),
                    label=f"dims of {label} expanded (stride 0)")
        return functools.partial(relaid, kind="expanded", dims=tuple(sorted(dims)))
    return functools.partial(relaid, kind="contiguous")


@st.composite
def any_layout(draw, t: torch.Tensor, kinds: tuple[str, ...] = VALUE_LAYOUTS,
               label: str = "x") -> torch.Tensor:
    """``t``'s values in a memory layout drawn from ``kinds`` (see ``relaid``).

    Use it for every tensor argument a drill's spec allows in any layout, so that a
    ``.view(...)`` bug, a function that assumes ``stride(-1) == 1``, or one that reads the
    storage instead of the tensor fails::

        x = draw(any_layout(draw(float_tensors(shape))))            # in a composite
        x = data.draw(any_layout(x, label="x"))                     # in a test with st.data()
        @given(strided_tensors(float_tensors(shapes())))            # as a strategy

    Draws shrink towards "contiguous", so a failure that does not depend on the layout
    is reported on a contiguous tensor. A layout that does not apply (a permutation of
    fewer than 2 dims) falls back to a sliced view. With "expanded" in ``kinds`` the
    values may change (see ``relaid``): compute the oracle from the drawn tensor.
    """
    return draw(layouts(t.dim(), kinds, label))(t)


def strided_tensors(tensors: st.SearchStrategy[torch.Tensor],
                    kinds: tuple[str, ...] = VALUE_LAYOUTS,
                    label: str = "x") -> st.SearchStrategy[torch.Tensor]:
    """Tensors from ``tensors``, each in a memory layout drawn by ``any_layout``."""
    return tensors.flatmap(lambda t: any_layout(t, kinds, label))


def copy_in_layout(t: torch.Tensor, dtype: torch.dtype | None = None,
                   device: torch.device | str | None = None) -> torch.Tensor:
    """A copy of ``t`` with storage of its own laid out like ``t``'s: the same strides and
    storage offset, the rest of the storage filled with ``storage_filler``. ``clone()``
    would not do: it makes sliced and expanded tensors contiguous (and ``.to(dtype)``
    makes sliced ones contiguous). ``dtype`` and ``device`` convert on the way.

    For fresh arguments per call (a submission may write into what it gets) that keep the
    layout ``any_layout`` drew. ``requires_grad`` is not carried over.
    """
    t = t.detach()
    dtype = t.dtype if dtype is None else dtype
    device = t.device if device is None else device
    size, stride, offset = t.shape, t.stride(), t.storage_offset()
    span = offset + (1 + sum((n - 1) * s for n, s in zip(size, stride)) if t.numel() else 0)
    base = torch.full((max(span, 1),), storage_filler(dtype), dtype=dtype, device=device)
    out = base.as_strided(size, stride, offset)
    # write through the dims that are not stride-0 repeats (an expanded tensor repeats them)
    written, source = out, t
    for d, s in enumerate(stride):
        if s == 0 and size[d] > 1:
            written, source = written.narrow(d, 0, 1), source.narrow(d, 0, 1)
    written.copy_(source)
    return out


# ------------------------------------------------------------------ shape mismatches

@reusable
@st.composite
def mismatched_shapes(draw, shape: tuple[int, ...], label: str = "other shape") -> tuple[int, ...]:
    """A shape other than ``shape``, changed the way a lax shape check misses it, in ANY dim
    (not only the last): one dim one longer or one shorter, one dim set to 1 (the two then
    still broadcast), two dims of different sizes swapped (the same number of elements), a
    size-1 dim added at either end, or a dim dropped."""
    shape = tuple(shape)
    kinds = ["added first", "added last"]
    if shape:
        kinds += ["longer", "dropped"]
        if any(n > 1 for n in shape):
            kinds += ["shorter", "one"]
        if len(set(shape)) > 1:
            kinds.append("swapped")
    kind = draw(st.sampled_from(kinds), label=f"{label}: how it differs")
    if kind == "added first":
        return (1, *shape)
    if kind == "added last":
        return (*shape, 1)
    if kind == "swapped":
        i, j = draw(st.sampled_from([(i, j) for i in range(len(shape)) for j in range(i + 1, len(shape))
                                     if shape[i] != shape[j]]), label=f"{label}: dims swapped")
        other = list(shape)
        other[i], other[j] = other[j], other[i]
        return tuple(other)
    dims = [d for d in range(len(shape)) if kind in ("longer", "dropped") or shape[d] > 1]
    d = draw(st.sampled_from(dims), label=f"{label}: dim")
    if kind == "dropped":
        return shape[:d] + shape[d + 1:]
    size = {"longer": shape[d] + 1, "shorter": shape[d] - 1, "one": 1}[kind]
    return shape[:d] + (size,) + shape[d + 1:]
