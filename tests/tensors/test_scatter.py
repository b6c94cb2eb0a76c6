"""gather and out-of-place scatter by advanced indexing, equal to torch.gather and Tensor.scatter."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.properties import (
    anchored,
    assert_arguments_unchanged,
    assert_no_shared_memory,
    assert_ordinary,
    assert_ordinary_answer,
)
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, int_tensors, shapes

_INDEXING = ("build one coordinate tensor per dim over index.shape (torch.meshgrid of "
             "torch.arange, indexing='ij'), put index in place of the coordinate of dim, "
             "and index the input with them")
pytestmark = pytest.mark.exercise(points=15, forbid={
    "torch.gather": _INDEXING,
    "Tensor.gather": _INDEXING,
    "torch.take_along_dim": _INDEXING,
    "Tensor.take_along_dim": _INDEXING,
    "torch.scatter": _INDEXING + ", then assign into a clone of the input",
    "Tensor.scatter": _INDEXING + ", then assign into a clone of the input",
    "Tensor.scatter_": _INDEXING + ", then assign into a clone of the input",
    "torch.scatter_add": "scatter writes, it does not add: assign into a clone of the input "
                         "with advanced indexing",
    "Tensor.scatter_add": "assign into a clone of the input with advanced indexing",
    "Tensor.scatter_add_": "assign into a clone of the input with advanced indexing",
    "torch.scatter_reduce": "assign into a clone of the input with advanced indexing",
    "Tensor.scatter_reduce": "assign into a clone of the input with advanced indexing",
    "Tensor.scatter_reduce_": "assign into a clone of the input with advanced indexing",
})

# float16 and bfloat16 run on the CPU too: values are only copied, so they stay exact
VALUE_DTYPES = [torch.float64, torch.float32, torch.int64, torch.float16, torch.bfloat16]
INDEX_DTYPES = [torch.int64, torch.int32]
# input and src are only read: any layout, stride-0 expanded views included
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")


class Case(NamedTuple):
    input: torch.Tensor
    dim: int
    index: torch.Tensor
    src: torch.Tensor | None = None  # scatter only

    def args(self) -> tuple[Any, ...]:
        """Fresh copies of the arguments, each in the memory layout drawn for it (a
        submission may write into what it gets)."""
        copies = (copy_in_layout(self.input), self.dim, copy_in_layout(self.index))
        return copies if self.src is None else (*copies, copy_in_layout(self.src))


# ------------------------------------------------------------------ strategies

@st.composite
def values(draw, shape: tuple[int, ...], dtype: torch.dtype, label: str) -> torch.Tensor:
    """Tensor values of ``dtype`` in any memory layout (transposed, sliced out of a
    NaN-filled storage, expanded with stride 0: scatter and gather only read them)."""
    if dtype.is_floating_point:
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        t = draw(float_tensors(shape, dtype=wide, low=-9, high=9), label=label).to(dtype)
    else:
        t = draw(int_tensors(shape, -9, 9, dtype=dtype), label=label)
    return draw(any_layout(t, READ_ONLY_LAYOUTS, label=label))


@st.composite
def layouts(draw, index_along_dim: int | None, min_index_side: int = 0):
    """(input shape, dim, index shape): index no larger than input off ``dim``.

    Along ``dim`` the index has ``0..index_along_dim`` entries, or at most the input's
    size there when ``index_along_dim`` is None (room for distinct positions).
    """
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="input shape")
    ndim = len(shape)
    dim = draw(st.integers(-ndim, ndim - 1), label="dim")
    d = dim % ndim
    index_shape = tuple(
        draw(st.integers(min_index_side, (shape[d] if index_along_dim is None else index_along_dim)
                         if i == d else n), label=f"index size in dim {i}")
        for i, n in enumerate(shape))
    return shape, dim, index_shape


@st.composite
def gather_cases(draw, min_index_side: int = 0) -> Case:
    shape, dim, index_shape = draw(layouts(index_along_dim=4, min_index_side=min_index_side))
    d = dim % len(shape)
    index = draw(int_tensors(index_shape, 0, shape[d] - 1,
                             dtype=draw(st.sampled_from(INDEX_DTYPES), label="index dtype")),
                 label="index")
    index = draw(any_layout(index, READ_ONLY_LAYOUTS, label="index"))
    source = draw(values(shape, draw(st.sampled_from(VALUE_DTYPES), label="dtype"), "input"))
    return Case(source, dim, index)


@st.composite
def scatter_cases(draw, distinct: bool = True, min_index_side: int = 0) -> Case:
    """Scatter cases; with ``distinct`` no two index elements write the same position."""
    shape, dim, index_shape = draw(layouts(index_along_dim=None if distinct else 4,
                                           min_index_side=min_index_side))
    d = dim % len(shape)
    index_dtype = draw(st.sampled_from(INDEX_DTYPES), label="index dtype")
    if distinct:  # each line along dim: the first entries of a permutation of its positions
        key_shape = index_shape[:d] + (shape[d],) + index_shape[d + 1:]
        keys = draw(int_tensors(key_shape, 0, 9), label="order of positions")
        index = keys.argsort(dim=d, stable=True).narrow(d, 0, index_shape[d]).to(index_dtype)
        # not expanded: a stride-0 dim along ``dim`` would repeat positions
        index = draw(any_layout(index, VALUE_LAYOUTS, label="index"))
    else:
        index = draw(int_tensors(index_shape, 0, shape[d] - 1, dtype=index_dtype), label="index")
        index = draw(any_layout(index, READ_ONLY_LAYOUTS, label="index"))
    dtype = draw(st.sampled_from(VALUE_DTYPES), label="dtype")
    extra = draw(st.lists(st.integers(0, 2), min_size=len(shape), max_size=len(shape)),
                 label="src larger than index by")
    src_shape = tuple(n + e for n, e in zip(index_shape, extra))
    return Case(draw(values(shape, dtype, "input")), dim, index,
                draw(values(src_shape, dtype, "src")))


def with_bad_value(case: Case, data: st.DataObject) -> tuple[Case, int]:
    """The case with one index element moved out of ``[0, input.size(dim))``."""
    size = case.input.size(case.dim)
    bad = data.draw(st.sampled_from([-1, -2, -size, size, size + 1]), label="bad index value")
    index = case.index.clone(memory_format=torch.contiguous_format)
    where = data.draw(st.integers(0, index.numel() - 1), label="position of the bad value")
    index.view(-1)[where] = bad
    return case._replace(index=index), bad


def describe_case(case: Case, name: str) -> str:
    src = "" if case.src is None else f", src of shape {tuple(case.src.shape)}"
    return (f"{name}(input of shape {tuple(case.input.shape)}, dim={case.dim}, index of shape "
            f"{tuple(case.index.shape)}{src})")


def ordinary_gather(impl, case: Case, why: str):
    """An anchor: gather of a valid case equals torch.gather."""
    return anchored(lambda: impl.gather(*case.args()[:3]),
                    lambda: torch.gather(case.input, case.dim, case.index),
                    what=f"{describe_case(case, 'gather')} vs torch.gather ({why})")


def ordinary_scatter(impl, case: Case, why: str):
    """An anchor: scatter of a valid case (no repeated positions) equals Tensor.scatter."""
    return anchored(lambda: impl.scatter(*case.args()),
                    lambda: case.input.scatter(case.dim, case.index, case.src),
                    what=f"{describe_case(case, 'scatter')} vs Tensor.scatter ({why})")


# ------------------------------------------------------------------ gather

@pytest.mark.weight(3)
@example(Case(torch.tensor([[1, 2], [3, 4]]), 1, torch.tensor([[0, 0], [1, 0]])))  # the spec's example
@example(Case(torch.arange(6.).reshape(2, 3), 1, torch.zeros(2, 0, dtype=torch.int64)))
@example(Case(torch.arange(6.).reshape(2, 3), 0, torch.tensor([[1, 0, 1], [0, 0, 1], [1, 1, 1]])))
@settings(max_examples=50)
@given(gather_cases())
def test_gather_matches_torch(impl, case):
    expected = torch.gather(case.input, case.dim, case.index)
    assert_same(impl.gather(*case.args()), expected,
                what=f"{describe_case(case, 'gather')} (torch.gather gives the expected)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(gather_cases(min_index_side=1), st.data())
def test_gather_rejects_index_out_of_range(impl, case, data):
    bad_case, bad = with_bad_value(case, data)
    with ordinary_gather(impl, case, "the case before one index value was moved out of range"):
        with expect_raises(ValueError, when=f"an index value is {bad} but dim {case.dim} has size "
                                            f"{case.input.size(case.dim)} (negative values must "
                                            "not wrap around as in Python indexing)"):
            impl.gather(*bad_case.args())


# ------------------------------------------------------------------ scatter

@pytest.mark.weight(3)
@example(Case(torch.zeros(3, 2), 0, torch.tensor([[2, 0]]), torch.tensor([[5., 6.]])))  # the spec's example
@example(Case(torch.zeros(3, 2), 0, torch.tensor([[2, 0]]), torch.tensor([[5., 6.], [7., 8.]])))
@settings(max_examples=50)
@given(scatter_cases())
def test_scatter_matches_torch(impl, case):
    expected = case.input.scatter(case.dim, case.index, case.src)
    assert_same(impl.scatter(*case.args()), expected,
                what=f"{describe_case(case, 'scatter')} (Tensor.scatter gives the expected)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(scatter_cases(min_index_side=1))
def test_scatter_leaves_input_unchanged(impl, case):
    source, dim, index, src = case.args()
    got = impl.scatter(source, dim, index, src)
    assert_arguments_unchanged(impl, what="input, index and src after scatter (scatter is out of "
                                          "place: write into a clone, never into input)")
    assert_same(source, case.input, what="input after scatter (scatter is out of place: write "
                                          "into a clone, never into input)")
    assert_ordinary(lambda: got, lambda: case.input.scatter(case.dim, case.index, case.src),
                    what=f"{describe_case(case, 'scatter')} (Tensor.scatter gives the expected)")


@settings(max_examples=20)
@example(Case(torch.arange(6.).reshape(2, 3), 1, torch.zeros(2, 0, dtype=torch.int64),
              torch.ones(2, 1)))
@given(scatter_cases())
def test_results_share_no_memory_with_the_arguments(impl, case):
    """A new tensor every time, even when there is nothing to write (an empty index)."""
    for name in ("scatter", "gather"):
        args = case.args()
        if name == "scatter":
            got = impl.scatter(*args)
            expected = case.input.scatter(case.dim, case.index, case.src)
        else:
            args = args[:3]
            got = impl.gather(*args)
            expected = torch.gather(case.input, case.dim, case.index)
        assert_no_shared_memory(got, *args, what=describe_case(case, name))
        assert_ordinary_answer(got, expected, what=f"{describe_case(case, name)} (torch gives the expected)")


@settings(max_examples=20)
@given(scatter_cases(), st.data())
def test_scatter_writes_a_python_number(impl, case, data):
    if case.input.dtype.is_floating_point:
        value: float | int = data.draw(st.floats(-9, 9, width=32), label="value")
    else:
        value = data.draw(st.integers(-9, 9), label="value")
    expected = case.input.scatter(case.dim, case.index, value)
    assert_same(impl.scatter(case.input.clone(), case.dim, case.index.clone(), value), expected,
                what=f"{describe_case(case, 'scatter')} with src={value!r}")


@settings(max_examples=25)
@given(scatter_cases(distinct=False, min_index_side=1))
def test_scatter_with_repeated_positions_writes_one_of_their_values(impl, case):
    got = impl.scatter(*case.args())
    assert isinstance(got, torch.Tensor) and got.shape == case.input.shape, (
        f"{describe_case(case, 'scatter')} returned {got!r}; expected a tensor of the input's shape")
    written: dict[tuple[int, ...], list[Any]] = {}
    for p in itertools.product(*map(range, case.index.shape)):
        target = list(p)
        target[case.dim] = int(case.index[p])
        written.setdefault(tuple(target), []).append(case.src[p].item())
    for position in itertools.product(*map(range, case.input.shape)):
        value = got[position].item()
        allowed = written.get(position, [case.input[position].item()])
        assert value in allowed, (
            f"{describe_case(case, 'scatter')}: result{list(position)} is {value}, but the "
            f"values scattered there are {allowed}" if position in written else
            f"{describe_case(case, 'scatter')}: result{list(position)} is {value}; no index "
            f"points there, so it must keep input's {allowed[0]}")


@settings(max_examples=25)
@given(scatter_cases(min_index_side=1), st.data())
def test_scatter_rejects_index_out_of_range(impl, case, data):
    bad_case, bad = with_bad_value(case, data)
    with ordinary_scatter(impl, case, "the case before one index value was moved out of range"):
        with expect_raises(ValueError, when=f"an index value is {bad} but dim {case.dim} has "
                                            f"size {case.input.size(case.dim)}"):
            impl.scatter(*bad_case.args())


# ------------------------------------------------------------------ shared checks

@settings(max_examples=30)
@given(st.sampled_from(["gather", "scatter"]),
       st.sampled_from(["index has an extra dim", "index larger than input off dim",
                        "index larger than src"]),
       scatter_cases(min_index_side=1), st.data())
def test_index_shape_mismatch_raises_value_error(impl, name, how, case, data):
    anchor = ordinary_gather if name == "gather" and how != "index larger than src" else ordinary_scatter
    with anchor(impl, case, "the case before its shapes were made to mismatch"):
        check_index_shape_mismatch_raises(impl, name, how, case, data)


def check_index_shape_mismatch_raises(impl, name, how, case, data) -> None:
    if how == "index has an extra dim":
        case = case._replace(index=case.index.unsqueeze(0))
    elif how == "index larger than input off dim" and case.input.dim() >= 2:
        d = data.draw(st.sampled_from([d for d in range(case.input.dim())
                                       if d != case.dim % case.input.dim()]), label="dim grown")
        grown = list(case.index.shape)
        grown[d] = case.input.size(d) + 1
        index = torch.zeros(grown, dtype=case.index.dtype)
        src = torch.zeros(grown, dtype=case.input.dtype)
        case = case._replace(index=index, src=src)
    else:
        name = "scatter"
        how = "index larger than src"
        d = data.draw(st.integers(0, case.index.dim() - 1), label="dim of src cut")
        case = case._replace(src=case.src.narrow(d, 0, case.index.size(d) - 1))
    args = case.args()
    with expect_raises(ValueError, when=f"{how}: {describe_case(case, name)}"):
        if name == "gather":
            impl.gather(*args[:3])
        else:
            impl.scatter(*args)


@settings(max_examples=20)
@given(scatter_cases(), st.integers(0, 2), st.booleans())
def test_dim_out_of_range_raises_index_error(impl, case, beyond, negative):
    ndim = case.input.dim()
    dim = -ndim - 1 - beyond if negative else ndim + beyond
    bad = case._replace(dim=dim)
    with ordinary_gather(impl, case, "the same case with a valid dim"), \
            ordinary_scatter(impl, case, "the same case with a valid dim"):
        with expect_raises(IndexError, when=f"dim={dim} for a {ndim}-d input"):
            impl.gather(*bad.args()[:3])
        with expect_raises(IndexError, when=f"dim={dim} for a {ndim}-d input"):
            impl.scatter(*bad.args())


@settings(max_examples=20)
@given(scatter_cases(min_index_side=1), st.sampled_from([torch.float64, torch.int16, torch.bool]),
       st.data())
def test_wrong_dtypes_raise_value_error(impl, case, index_dtype, data):
    with ordinary_gather(impl, case, "the same case with the right dtypes"), \
            ordinary_scatter(impl, case, "the same case with the right dtypes"):
        check_wrong_dtypes_raise(impl, case, index_dtype, data)


def check_wrong_dtypes_raise(impl, case, index_dtype, data) -> None:
    bad_index = case._replace(index=case.index.to(index_dtype))
    with expect_raises(ValueError, when=f"index has dtype {index_dtype} (int64 or int32 only)"):
        impl.gather(*bad_index.args()[:3])
    with expect_raises(ValueError, when=f"index has dtype {index_dtype} (int64 or int32 only)"):
        impl.scatter(*bad_index.args())
    other = data.draw(st.sampled_from([t for t in VALUE_DTYPES if t != case.input.dtype]),
                      label="src dtype")
    bad_src = case._replace(src=case.src.to(other))
    with expect_raises(ValueError, when=f"src is {other} but input is {case.input.dtype} "
                                        "(torch refuses to cast src)"):
        impl.scatter(*bad_src.args())


# ------------------------------------------------------------------ GPU

def check_on_device(impl, case: Case, device: str) -> None:
    """gather and scatter with every tensor on ``device``: results stay there and match
    torch on the CPU exactly (they only copy values)."""
    moved = Case(case.input.to(device), case.dim, case.index.to(device), case.src.to(device))
    for name, expected in (("gather", torch.gather(case.input, case.dim, case.index)),
                           ("scatter", case.input.scatter(case.dim, case.index, case.src))):
        args = moved.args()
        got = impl.gather(*args[:3]) if name == "gather" else impl.scatter(*args)
        assert isinstance(got, torch.Tensor) and got.device.type == device, (
            f"{name} on {device} returned {got.device if isinstance(got, torch.Tensor) else got!r}; "
            f"the result must stay on the input's device ({device})")
        assert_same(got.cpu(), expected, what=f"{describe_case(case, name)} on {device}")


@pytest.mark.cuda
@settings(max_examples=30)
@given(scatter_cases())
def test_on_gpu_results_stay_on_the_device(impl, case):
    check_on_device(impl, case, "cuda")
