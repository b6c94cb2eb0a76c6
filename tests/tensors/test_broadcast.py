"""Broadcast shapes and the strides of expand, from the numbers alone, as torch computes them."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.testing import StudentError, expect_raises, is_tuple_of_ints
from tests.properties import anchored
from tests.strategies import shapes, strided_layouts

_BY_HAND = ("align the shapes on their last dim and compare sizes pairwise: 1 stretches, "
            "equal sizes stay, anything else clashes")
_STRIDES_BY_HAND = ("walk from the last dim: keep the stride where the size already matches, "
                    "write 0 where a size-1 dim is stretched; a new leading dim is a size-1 dim "
                    "with stride (size x stride of the dim to its right)")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.broadcast_shapes": _BY_HAND,
    "torch.broadcast_to": _BY_HAND,
    "torch.broadcast_tensors": _BY_HAND,
    "Tensor.broadcast_to": _BY_HAND,
    "Tensor.expand": _STRIDES_BY_HAND,
    "Tensor.expand_as": _STRIDES_BY_HAND,
})


def as_int_tuple(got: Any, call: str) -> tuple[int, ...]:
    """The answer as a tuple of ints (torch.Size is one); the exact type has its own property."""
    if isinstance(got, (tuple, list)) and all(isinstance(n, int) for n in got):
        return tuple(got)
    raise AssertionError(f"{call} returned {got!r}; expected a tuple of ints")


def call_text(shapes_: tuple[tuple[int, ...], ...]) -> str:
    return f"broadcast_shape({', '.join(map(str, shapes_))})"


def torch_expand_strides(size: tuple[int, ...], stride: tuple[int, ...],
                         target: tuple[int, ...]) -> tuple[int, ...]:
    return torch.empty_strided(size, stride).expand(target).stride()


def ordinary_shape(impl, shapes_: tuple[tuple[int, ...], ...], why: str):
    """An anchor: broadcast_shape of shapes that broadcast equals torch.broadcast_shapes."""
    return anchored(lambda: impl.broadcast_shape(*shapes_),
                    lambda: tuple(torch.broadcast_shapes(*shapes_)),
                    what=f"{call_text(shapes_)} vs torch.broadcast_shapes ({why})")


def ordinary_strides(impl, case: tuple[tuple[int, ...], ...], why: str):
    """An anchor: broadcast_strides of a possible expand equals expand's strides."""
    return anchored(lambda: impl.broadcast_strides(*case), lambda: torch_expand_strides(*case),
                    what=f"broadcast_strides{case} vs torch's expand ({why})")


# ------------------------------------------------------------------ strategies

@st.composite
def broadcastable_shapes(draw) -> tuple[tuple[int, ...], ...]:
    """One to four shapes (sides 0..4, 0 to 4 dims) that broadcast together."""
    count = draw(st.integers(1, 4), label="number of shapes")
    drawn = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, min_dims=0, max_dims=4,
                                                   min_side=0, max_side=4))
    return tuple(tuple(s) for s in drawn.input_shapes)


@st.composite
def clashing_shapes(draw) -> tuple[tuple[tuple[int, ...], ...], tuple[int, int]]:
    """Two to four shapes that broadcast except in one dim, where exactly two sizes clash.

    Every shape is a suffix of one result shape with some sizes set to 1; in the
    clashing dim one shape holds ``kept``, another ``clash``, the rest ``kept`` or 1.
    Returns the shapes, the clashing pair and the same shapes with the clash resolved
    (``clash`` put back to ``kept``), which broadcast.
    """
    result = list(draw(shapes(min_dims=1, max_dims=4, min_side=0, max_side=4), label="result"))
    dim = draw(st.integers(-len(result), -1), label="clashing dim")
    if result[dim] == 1:
        result[dim] = draw(st.sampled_from([0, 2, 3]), label="size made non-1")
    kept = result[dim]
    clash = draw(st.sampled_from([n for n in (0, 2, 3, 4, 5) if n != kept]), label="clashing size")
    shapes_ = []
    for i in range(draw(st.integers(2, 4), label="number of shapes")):
        ndim = draw(st.integers(-dim, len(result)), label=f"dims of shape {i}")
        shape = result[len(result) - ndim:]
        ones = draw(st.sets(st.integers(0, ndim - 1)), label=f"size-1 dims of shape {i}")
        shapes_.append([1 if j in ones else n for j, n in enumerate(shape)])
    shapes_[0][dim], shapes_[1][dim] = kept, clash
    fine = [list(s) for s in shapes_]
    fine[1][dim] = kept
    order = draw(st.permutations(range(len(shapes_))), label="order")
    return (tuple(tuple(shapes_[i]) for i in order), (kept, clash),
            tuple(tuple(fine[i]) for i in order))


@st.composite
def expand_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, target): a strided layout and a shape it can be expanded to."""
    size, stride = draw(strided_layouts(max_dims=3, max_side=4))
    lead = draw(st.lists(st.integers(0, 4), max_size=2), label="new leading dims")
    kept = [draw(st.integers(0, 4), label=f"target of size-1 dim {d}") if n == 1 else n
            for d, n in enumerate(size)]
    return size, stride, tuple(lead) + tuple(kept)


@st.composite
def size_one_kept_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Layouts with size-1 dims (arbitrary strides there) expanded to the same shape,
    maybe with one new leading dim of any size."""
    size = list(draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)))
    ones = draw(st.sets(st.integers(0, len(size) - 1), min_size=1), label="size-1 dims")
    stride = []
    for d in range(len(size)):
        if d in ones:
            size[d] = 1
        stride.append(draw(st.integers(1, 20), label=f"stride of dim {d}"))
    lead = draw(st.lists(st.integers(0, 3), max_size=1), label="new leading dims")
    return tuple(size), tuple(stride), tuple(lead) + tuple(size)


# ------------------------------------------------------------------ broadcast_shape

@pytest.mark.weight(4)
@example(((8, 1, 6, 1), (7, 1, 5)))  # the spec's examples
@example(((5, 0), (1,)))
@example(((3,), (3, 1)))
@example(((0,), (1,)))
@settings(max_examples=60)
@given(broadcastable_shapes())
def test_shape_matches_torch(impl, shapes_):
    call = call_text(shapes_)
    got = as_int_tuple(impl.broadcast_shape(*shapes_), call)
    expected = tuple(torch.broadcast_shapes(*shapes_))
    assert got == expected, (f"{call} returned {got}; torch.broadcast_shapes gives {expected} "
                             "(shapes align on their last dim; 1 stretches, 0 does not)")


def test_no_shapes_broadcast_to_a_scalar(impl):
    with ordinary_shape(impl, ((8, 1, 6, 1), (7, 1, 5)), "beside the empty call"):
        got = as_int_tuple(impl.broadcast_shape(), "broadcast_shape()")
        assert got == (), f"broadcast_shape() returned {got}; with no shapes the result is ()"


@pytest.mark.weight(2)
@example((((2, 3), (4,)), (3, 4), ((2, 3), (3,))))
@settings(max_examples=50)
@given(clashing_shapes())
def test_clash_raises_value_error_naming_the_sizes(impl, case):
    shapes_, (kept, clash), fine = case
    with ordinary_shape(impl, fine, "the same shapes without the clash"):
        check_clash_raises(impl, shapes_, kept, clash)


def check_clash_raises(impl, shapes_, kept: int, clash: int) -> None:
    call = call_text(shapes_)
    try:
        got = impl.broadcast_shape(*shapes_)
    except StudentError as err:
        if not isinstance(err.original, ValueError):
            raise AssertionError(f"expected ValueError from {call} (sizes {kept} and {clash} "
                                 f"clash), but it raised {type(err.original).__name__}: "
                                 f"{err.original}") from None
        message = str(err.original)
        missing = [n for n in (kept, clash) if not re.search(rf"(?<!\d){n}(?!\d)", message)]
        assert not missing, (f"{call} raised ValueError({message!r}), which does not name the "
                             f"clashing size(s) {missing}: say which sizes clash")
        return
    raise AssertionError(f"expected ValueError from {call}: sizes {kept} and {clash} clash in "
                         f"one dim, but it returned {got!r}")


@settings(max_examples=25)
@given(broadcastable_shapes(), st.integers(-3, -1), st.data())
def test_negative_size_raises_value_error(impl, shapes_, negative, data):
    bad = list(shapes_) + [(1,)]
    which = data.draw(st.integers(0, len(bad) - 1), label="shape made negative")
    shape = list(bad[which]) or [1]
    shape[data.draw(st.integers(0, len(shape) - 1), label="dim made negative")] = negative
    bad[which] = tuple(shape)
    with ordinary_shape(impl, shapes_, "the shapes before one size was made negative"):
        with expect_raises(ValueError, when=f"a size is negative ({call_text(tuple(bad))})"):
            impl.broadcast_shape(*bad)


# ------------------------------------------------------------------ broadcast_strides

@pytest.mark.weight(4)
@settings(max_examples=60)
@example(((3, 1), (1, 3), (2, 3, 4)))  # the spec's example: x = torch.empty(1, 3).t()
@given(expand_cases())
def test_strides_match_expand(impl, case):
    size, stride, target = case
    call = f"broadcast_strides({size}, {stride}, {target})"
    got = as_int_tuple(impl.broadcast_strides(size, stride, target), call)
    expected = torch_expand_strides(size, stride, target)
    assert got == expected, (
        f"{call} returned {got}; torch.empty_strided{(size, stride)}.expand{target}.stride() is "
        f"{expected} (0 on every stretched dim, the old stride on dims that keep their size, "
        "size x stride of the right-hand dim on new size-1 dims)")


@pytest.mark.weight(2)
@example(((1, 3), (7, 1), (1, 3)))
@settings(max_examples=40)
@given(size_one_kept_cases())
def test_size_one_dims_that_stay_size_one_keep_their_stride(impl, case):
    size, stride, target = case
    call = f"broadcast_strides({size}, {stride}, {target})"
    got = as_int_tuple(impl.broadcast_strides(size, stride, target), call)
    expected = torch_expand_strides(size, stride, target)
    lead = len(target) - len(size)
    assert got[lead:] == expected[lead:], (
        f"{call} returned {got}, expected {expected}: no dim of x is stretched, so expand keeps "
        "the strides of x, even on its size-1 dims")
    assert got == expected, f"{call} returned {got}, expected {expected} (the new leading dims)"


@pytest.mark.weight(2)
@example(((3,), (2,)), 1)
@settings(max_examples=40)
@given(strided_layouts(max_dims=3, max_side=4), st.integers(1, 2))
def test_new_size_one_dims_get_the_unsqueeze_stride(impl, layout, new_dims):
    size, stride = layout
    target = (1,) * new_dims + size
    call = f"broadcast_strides({size}, {stride}, {target})"
    got = as_int_tuple(impl.broadcast_strides(size, stride, target), call)
    expected = torch_expand_strides(size, stride, target)
    assert got == expected, (
        f"{call} returned {got}; expand gives {expected}: a new leading dim of size 1 is not "
        "broadcast, it gets the stride unsqueeze(0) would give (size x stride of the dim to "
        "its right in the result; 0 for a 0-d x)")


@settings(max_examples=30)
@given(expand_cases(), st.sampled_from(["fewer dims", "size differs"]), st.data())
def test_impossible_expand_raises_value_error(impl, case, how, data):
    with ordinary_strides(impl, case, "the possible expand the case was made from"):
        check_impossible_expand_raises(impl, case, how, data)


def check_impossible_expand_raises(impl, case, how, data) -> None:
    size, stride, target = case
    if how == "fewer dims" and size:
        target = target[len(target) - len(size) + 1:]
    else:
        if not size:
            size, stride, target = (2,), (1,), (3,)
        d = data.draw(st.integers(0, len(size) - 1), label="dim changed")
        lead = len(target) - len(size)
        n = size[d] if size[d] != 1 else 2
        size = size[:d] + (n,) + size[d + 1:]
        target = target[:lead + d] + (n + 1,) + target[lead + d + 1:]
    with expect_raises(ValueError, when=f"size {size} cannot be expanded to {target} ({how})"):
        impl.broadcast_strides(size, stride, target)


@settings(max_examples=20)
@given(broadcastable_shapes(), expand_cases())
def test_return_types(impl, shapes_, case):
    with ordinary_shape(impl, shapes_, "beside the types"), \
            ordinary_strides(impl, case, "beside the types"):
        check_return_types(impl, shapes_, case)


def check_return_types(impl, shapes_, case) -> None:
    got = impl.broadcast_shape(*shapes_)
    assert is_tuple_of_ints(got), (
        f"{call_text(shapes_)} returned {got!r}; expected a tuple of Python ints")
    got = impl.broadcast_strides(*case)
    assert is_tuple_of_ints(got), (
        f"broadcast_strides{case} returned {got!r}; expected a tuple of Python ints, "
        "like Tensor.stride()")
