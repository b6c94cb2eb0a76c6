"""Shared hypothesis strategies for the drills' property tests.

Tensors are drawn from hypothesis' own numpy strategies, so a failing input
shrinks towards small shapes and simple values (zeros, ones) and the report
shows the smallest case that breaks a submission.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

TORCH_TO_NUMPY = {torch.float64: np.float64, torch.float32: np.float32,
                  torch.int64: np.int64, torch.int32: np.int32, torch.int16: np.int16,
                  torch.int8: np.int8, torch.uint8: np.uint8, torch.bool: np.bool_}


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0,
           max_side: int = 5) -> st.SearchStrategy[tuple[int, ...]]:
    """Tensor shapes; sides may be 0 unless ``min_side`` says otherwise."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                            min_side=min_side, max_side=max_side)


def float_tensors(shape, dtype: torch.dtype = torch.float64, low: float = -10.0,
                  high: float = 10.0) -> st.SearchStrategy[torch.Tensor]:
    """Finite floats in [low, high] of a given shape (or a shape strategy)."""
    np_dtype = TORCH_TO_NUMPY[dtype]
    width = 64 if dtype == torch.float64 else 32
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=width)
    return hnp.arrays(np_dtype, shape, elements=elements).map(lambda a: torch.from_numpy(a.copy()))


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
