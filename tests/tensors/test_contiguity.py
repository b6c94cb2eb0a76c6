"""Row-major contiguity and strides from sizes alone, as torch computes them."""

from typing import Any

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import expect_raises, is_tuple_of_ints
from tests.properties import anchored
from tests.strategies import row_major_strides, shapes, strided_layouts

_WALK = "walk the dims from the last, tracking the stride a row-major layout would have there (skip size-1 dims)"
_STRIDES = "compute the strides from the sizes: last is 1, each earlier one is the next stride times max(next size, 1)"
pytestmark = pytest.mark.exercise(points=10, forbid={
    "Tensor.is_contiguous": _WALK,
    "Tensor.stride": _STRIDES,
    "torch.empty_strided": "reason with the size and stride numbers; no tensor is needed",
    "Tensor.as_strided": "reason with the size and stride numbers; no tensor is needed",
    # torch's own Python helpers that answer from the numbers (the audit's routes)
    "torch._prims_common.check_contiguous_sizes_strides": _WALK,
    "torch._prims_common._is_non_overlapping_and_dense_or_false": _WALK,
    "torch.fx.experimental.sym_node.sympy_is_contiguous": _WALK,
    "torch.fx.experimental.sym_node.sympy_is_contiguous_generic": _WALK,
    "torch._prims_common.make_contiguous_strides_for": _STRIDES,
    "torch.fx.experimental.symbolic_shapes.create_contiguous": _STRIDES,
})


def torch_says_contiguous(size: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    return torch.empty_strided(size, stride).is_contiguous()


def non_contiguous_twin(size: tuple[int, ...], stride: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A layout next to (size, stride) that torch calls NOT contiguous: every size-0 dim made
    2, and, where that is still contiguous, a new leading dim of size 2 with stride 0 (an
    expanded layout)."""
    size = tuple(2 if n == 0 else n for n in size)
    if torch_says_contiguous(size, stride):
        size, stride = (2, *size), (0, *stride)
    assert not torch_says_contiguous(size, stride), "the test's twin must be non-contiguous"
    return size, stride


def opposite_twin(size: tuple[int, ...], stride: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A layout whose answer is the opposite of (size, stride)'s: the row-major strides of
    the same size for a non-contiguous layout, ``non_contiguous_twin`` for a contiguous one."""
    if torch_says_contiguous(size, stride):
        return non_contiguous_twin(size, stride)
    return size, row_major_strides(size)


def check_layout_and_twin(impl, size: tuple[int, ...], stride: tuple[int, ...]) -> None:
    """is_contiguous agrees with torch on (size, stride) and on its opposite twin, so that
    neither "always True" nor "always False" passes an example."""
    for s, st_ in ((size, stride), opposite_twin(size, stride)):
        call = f"is_contiguous(size={s}, stride={st_})"
        got = impl.is_contiguous(s, st_)
        expected = torch_says_contiguous(s, st_)
        assert type(got) is bool and got == expected, (
            f"{call} returned {got!r}, but torch.empty_strided{(s, st_)}.is_contiguous() is "
            f"{expected}")


def ordinary_strides(impl, size: tuple[int, ...], what: str):
    """An anchor: contiguous_strides(size) equals torch.empty(size).stride()."""
    return anchored(lambda: impl.contiguous_strides(size), lambda: torch.empty(size).stride(),
                    what=f"contiguous_strides({size}) vs torch.empty{size}.stride() ({what})")


def ordinary_layouts(impl, size: tuple[int, ...], stride: tuple[int, ...]):
    """An anchor: is_contiguous right on (size, stride) and on its opposite twin."""
    return anchored(lambda: check_layout_and_twin(impl, size, stride))


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
@example(((2, 3), (3, 1)))  # the spec's examples: torch.empty(2, 3), its .t(), an expand, a size-1 dim
@example(((3, 2), (1, 3)))
@example(((2, 3), (0, 1)))
@example(((2, 1, 3), (3, 99, 1)))
@given(strided_layouts())
def test_agrees_with_torch_on_layouts(impl, layout):
    """Each layout meets its opposite twin: "always True" and "always False" both fail."""
    size, stride = layout
    for s, st_ in (layout, opposite_twin(size, stride)):
        call = f"is_contiguous(size={s}, stride={st_})"
        got = as_bool(impl.is_contiguous(s, st_), call)
        expected = torch_says_contiguous(s, st_)
        assert got == expected, (
            f"{call} returned {got}, but torch.empty_strided{(s, st_)}.is_contiguous() "
            f"is {expected}")


@pytest.mark.weight(2)
@given(sizes_with_some_ones())
def test_size_one_dims_do_not_matter(impl, layout):
    size, stride = layout
    call = f"is_contiguous(size={size}, stride={stride})"
    got = as_bool(impl.is_contiguous(size, stride), call)
    assert got, (f"{call} returned False; the strides are row-major except on size-1 dims, "
                 "which torch ignores (you never step along them), so it is contiguous")
    twin_size, twin_stride = non_contiguous_twin(size, stride)
    call = f"is_contiguous(size={twin_size}, stride={twin_stride})"
    got = as_bool(impl.is_contiguous(twin_size, twin_stride), call)
    assert not got, (f"{call} returned True; the size-1 dims may carry any stride, but the "
                     "size-2 dim with stride 0 in front makes it non-contiguous")


@pytest.mark.weight(2)
@example(((0, 2), (10, 2)))
@given(empty_layouts())
def test_empty_tensors_are_contiguous(impl, layout):
    size, stride = layout
    call = f"is_contiguous(size={size}, stride={stride})"
    got = as_bool(impl.is_contiguous(size, stride), call)
    assert got, f"{call} returned False; a tensor with no elements is contiguous whatever its strides"
    twin_size, twin_stride = non_contiguous_twin(size, stride)
    call = f"is_contiguous(size={twin_size}, stride={twin_stride})"
    got = as_bool(impl.is_contiguous(twin_size, twin_stride), call)
    assert not got, (f"{call} returned True; the same strides with the empty dims given size 2 "
                     "(and, where needed, a stride-0 leading dim) are not contiguous: the "
                     "empty-tensor rule is only for tensors with no elements")


@pytest.mark.weight(3)
@example((2, 3, 4))  # the spec's examples
@example((2, 0, 3))
@given(shapes(min_dims=0, max_dims=5, min_side=0, max_side=5))
def test_strides_match_torch_empty(impl, size):
    call = f"contiguous_strides({size})"
    got = as_int_tuple(impl.contiguous_strides(size), call)
    expected = torch.empty(size).stride()
    assert got == expected, (f"{call} returned {got}; torch.empty{size}.stride() is {expected} "
                             "(a size-0 dim counts as 1 in the product)")


@settings(max_examples=50)
@given(shapes(min_dims=0, max_dims=5, min_side=0, max_side=5))
def test_own_strides_are_contiguous(impl, size):
    with ordinary_strides(impl, size, "the strides checked here must be the right ones"):
        strides = as_int_tuple(impl.contiguous_strides(size), f"contiguous_strides({size})")
        call = f"is_contiguous({size}, contiguous_strides({size}) = {strides})"
        got = as_bool(impl.is_contiguous(size, strides), call)
        assert got, f"{call} returned False: the strides of a fresh tensor must count as contiguous"
        twin_size, twin_stride = non_contiguous_twin(size, strides)
        call = f"is_contiguous({twin_size}, {twin_stride})"
        assert not as_bool(impl.is_contiguous(twin_size, twin_stride), call), (
            f"{call} returned True; a stride-0 leading dim of size 2 is not contiguous")


@settings(max_examples=50)
@given(strided_layouts())
def test_return_types(impl, layout):
    size, stride = layout
    with ordinary_layouts(impl, size, stride), ordinary_strides(impl, size, "beside the types"):
        answer = impl.is_contiguous(size, stride)
        assert type(answer) is bool, (
            f"is_contiguous({size}, {stride}) returned {answer!r} of type {type(answer).__name__}; "
            "expected a Python bool (True or False)")
        strides = impl.contiguous_strides(size)
        assert is_tuple_of_ints(strides), (
            f"contiguous_strides({size}) returned {strides!r}; expected a tuple of Python ints, "
            "like Tensor.stride()")


@settings(max_examples=50)
@given(strided_layouts(), st.integers(-2, 2).filter(bool))
def test_length_mismatch_raises_value_error(impl, layout, change):
    size, stride = layout
    bad = stride + (1, 1) if change > 0 else stride[:max(0, len(stride) + change)]
    if len(bad) == len(size):  # a 0-d size has nothing to cut
        bad = (1,)
    with ordinary_layouts(impl, size, stride):
        with expect_raises(ValueError, when=f"size {size} and stride {bad} differ in length"):
            impl.is_contiguous(size, bad)


@settings(max_examples=50)
@given(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), st.integers(-3, -1), st.data())
def test_negative_size_raises_value_error(impl, size, negative, data):
    where = data.draw(st.integers(0, len(size) - 1), label="dim made negative")
    bad = tuple(negative if d == where else n for d, n in enumerate(size))
    stride = row_major_strides(tuple(max(n, 1) for n in bad))
    with ordinary_strides(impl, size, "beside the error case"), \
            ordinary_layouts(impl, size, row_major_strides(size)):
        with expect_raises(ValueError, when=f"a size is negative (size {bad})"):
            impl.contiguous_strides(bad)
        with expect_raises(ValueError, when=f"a size is negative (size {bad}, stride {stride})"):
            impl.is_contiguous(bad, stride)
