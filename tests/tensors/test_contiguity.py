"""Row-major contiguity and strides from sizes alone, as torch computes them."""

from typing import Any

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from grader.contract.expect import expect_raises
from tests.strategies import row_major_strides, shapes, strided_layouts

pytestmark = pytest.mark.exercise(points=10, forbid={
    "Tensor.is_contiguous": "walk the dims from the last, tracking the stride a row-major "
                            "layout would have there (skip size-1 dims)",
    "Tensor.stride": "compute the strides from the sizes: last is 1, each earlier one is the "
                     "next stride times max(next size, 1)",
    "torch.empty_strided": "reason with the size and stride numbers; no tensor is needed",
    "Tensor.as_strided": "reason with the size and stride numbers; no tensor is needed",
})


def torch_says_contiguous(size: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    return torch.empty_strided(size, stride).is_contiguous()


def as_bool(got: Any, call: str) -> bool:
    """The answer as a bool; only a value that is no truth value at all fails here
    (the exact type has its own property)."""
    if isinstance(got, bool) or (isinstance(got, int) and got in (0, 1)):
        return bool(got)
    raise AssertionError(f"{call} returned {got!r} ({type(got).__name__}); expected True or False")


def as_int_tuple(got: Any, call: str) -> tuple[int, ...]:
    if isinstance(got, (tuple, list)) and all(isinstance(s, int) for s in got):
        return tuple(got)
    raise AssertionError(f"{call} returned {got!r}; expected a tuple of ints")


@st.composite
def sizes_with_some_ones(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A contiguous layout whose size-1 dims carry arbitrary strides."""
    size = draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    ones = draw(st.sets(st.integers(0, len(size) - 1), min_size=1))
    size = tuple(1 if d in ones else n for d, n in enumerate(size))
    stride = list(row_major_strides(size))
    for d in sorted(ones):
        stride[d] = draw(st.integers(0, 50), label=f"stride of size-1 dim {d}")
    return size, tuple(stride)


@st.composite
def empty_layouts(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A size with at least one 0 and arbitrary strides."""
    size = list(draw(shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)))
    if 0 not in size:
        size[draw(st.integers(0, len(size) - 1), label="dim made empty")] = 0
    stride = draw(st.lists(st.integers(0, 20), min_size=len(size), max_size=len(size)))
    return tuple(size), tuple(stride)


@pytest.mark.weight(4)
@given(strided_layouts())
def test_agrees_with_torch_on_layouts(impl, layout):
    size, stride = layout
    call = f"is_contiguous(size={size}, stride={stride})"
    got = as_bool(impl.is_contiguous(size, stride), call)
    expected = torch_says_contiguous(size, stride)
    assert got == expected, (
        f"{call} returned {got}, but torch.empty_strided{(size, stride)}.is_contiguous() "
        f"is {expected}")


@pytest.mark.weight(2)
@given(sizes_with_some_ones())
def test_size_one_dims_do_not_matter(impl, layout):
    size, stride = layout
    call = f"is_contiguous(size={size}, stride={stride})"
    got = as_bool(impl.is_contiguous(size, stride), call)
    assert got, (f"{call} returned False; the strides are row-major except on size-1 dims, "
                 "which torch ignores (you never step along them), so it is contiguous")


@pytest.mark.weight(2)
@example(((0, 2), (10, 2)))
@given(empty_layouts())
def test_empty_tensors_are_contiguous(impl, layout):
    size, stride = layout
    call = f"is_contiguous(size={size}, stride={stride})"
    got = as_bool(impl.is_contiguous(size, stride), call)
    assert got, f"{call} returned False; a tensor with no elements is contiguous whatever its strides"


@pytest.mark.weight(3)
@given(shapes(min_dims=0, max_dims=5, min_side=0, max_side=5))
def test_strides_match_torch_empty(impl, size):
    call = f"contiguous_strides({size})"
    got = as_int_tuple(impl.contiguous_strides(size), call)
    expected = torch.empty(size).stride()
    assert got == expected, (f"{call} returned {got}; torch.empty{size}.stride() is {expected} "
                             "(a size-0 dim counts as 1 in the product)")


@given(shapes(min_dims=0, max_dims=5, min_side=0, max_side=5))
def test_own_strides_are_contiguous(impl, size):
    strides = as_int_tuple(impl.contiguous_strides(size), f"contiguous_strides({size})")
    call = f"is_contiguous({size}, contiguous_strides({size}) = {strides})"
    got = as_bool(impl.is_contiguous(size, strides), call)
    assert got, f"{call} returned False: the strides of a fresh tensor must count as contiguous"


@given(strided_layouts())
def test_return_types(impl, layout):
    size, stride = layout
    answer = impl.is_contiguous(size, stride)
    assert type(answer) is bool, (
        f"is_contiguous({size}, {stride}) returned {answer!r} of type {type(answer).__name__}; "
        "expected a Python bool (True or False)")
    strides = impl.contiguous_strides(size)
    assert type(strides) is tuple and all(type(s) is int for s in strides), (
        f"contiguous_strides({size}) returned {strides!r}; expected a tuple of Python ints, "
        "like Tensor.stride()")


@given(strided_layouts(), st.integers(-2, 2).filter(bool))
def test_length_mismatch_raises_value_error(impl, layout, change):
    size, stride = layout
    stride = stride + (1, 1) if change > 0 else stride[:max(0, len(stride) + change)]
    if len(stride) == len(size):  # a 0-d size has nothing to cut
        stride = (1,)
    with expect_raises(ValueError, when=f"size {size} and stride {stride} differ in length"):
        impl.is_contiguous(size, stride)


@given(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), st.integers(-3, -1), st.data())
def test_negative_size_raises_value_error(impl, size, negative, data):
    where = data.draw(st.integers(0, len(size) - 1), label="dim made negative")
    size = tuple(negative if d == where else n for d, n in enumerate(size))
    stride = row_major_strides(tuple(max(n, 1) for n in size))
    with expect_raises(ValueError, when=f"a size is negative (size {size})"):
        impl.contiguous_strides(size)
    with expect_raises(ValueError, when=f"a size is negative (size {size}, stride {stride})"):
        impl.is_contiguous(size, stride)
