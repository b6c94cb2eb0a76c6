"""index_select, masked_select, take, where and index_fill by plain indexing, equal to torch's own."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.numerics import overflowed
from tests.properties import (
    anchored,
    assert_arguments_unchanged,
    assert_no_shared_memory,
    assert_ordinary,
    assert_ordinary_answer,
)
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, int_tensors, sampled, shapes

_PLAIN = ("use plain indexing: t[index] along a dim (with slices before it), t[mask], "
          "reshape, expand and clone")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.index_select": _PLAIN,
    "Tensor.index_select": _PLAIN,
    "torch.masked_select": "broadcast x and mask to one shape with expand, then index with the mask",
    "Tensor.masked_select": "broadcast x and mask to one shape with expand, then index with the mask",
    "torch.take": "flatten x in its logical order with reshape(-1), then index it",
    "Tensor.take": "flatten x in its logical order with reshape(-1), then index it",
    "torch.where": "clone the broadcast y and write the broadcast x into it through the mask",
    "Tensor.where": "clone the broadcast y and write the broadcast x into it through the mask",
    "torch.index_fill": "clone x, then assign value through an index along dim",
    "Tensor.index_fill": "clone x, then assign value through an index along dim",
    "Tensor.index_fill_": "clone x, then assign value through an index along dim",
    "torch.gather": _PLAIN,
    "torch.take_along_dim": _PLAIN,
})

DTYPES = (torch.float64, torch.float32, torch.int64, torch.bool)
# only read: any layout, stride-0 expanded views included
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
SPECIALS = (float("inf"), float("-inf"), float("nan"))


@st.composite
def values(draw, shape: tuple[int, ...], dtype: torch.dtype, label: str,
           kinds: tuple[str, ...] = READ_ONLY_LAYOUTS) -> torch.Tensor:
    if dtype == torch.bool:
        t = draw(int_tensors(shape, 0, 1), label=label).bool()
    elif dtype.is_floating_point:
        t = draw(float_tensors(shape, low=-9, high=9), label=label).to(dtype)
    else:
        t = draw(int_tensors(shape, -9, 9), label=label)
    return draw(any_layout(t, kinds, label=label))


def fresh(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` in its layout, for one call (a submission may write into what it gets)."""
    return copy_in_layout(t)


# ------------------------------------------------------------------ cases

@st.composite
def select_cases(draw, min_index: int = 0):
    """(x, dim, index) with index values in range, repeats allowed."""
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="x shape")
    dim = draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    x = draw(values(shape, draw(sampled(DTYPES), label="dtype"), "x"))
    n = draw(st.integers(min_index, 5), label="index length")
    index = draw(int_tensors((n,), 0, shape[dim] - 1), label="index")
    return x, dim, index.to(draw(sampled((torch.int64, torch.int32)), label="index dtype"))


@st.composite
def broadcast_pair(draw, label: str, other: str):
    """Two shapes that broadcast, either one possibly the smaller (size-1 or missing dims)."""
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), label=f"{label} shape")

    def squeezed(tag: str) -> tuple[int, ...]:
        keep = draw(st.integers(0, len(shape)), label=f"{tag}: trailing dims kept")
        tail = shape[len(shape) - keep:]
        ones = draw(st.lists(st.booleans(), min_size=len(tail), max_size=len(tail)),
                    label=f"{tag}: dims set to 1")
        return tuple(1 if one else n for n, one in zip(tail, ones))

    return squeezed(label), squeezed(other)


@st.composite
def masked_cases(draw):
    x_shape, mask_shape = draw(broadcast_pair("x", "mask"))
    x = draw(values(x_shape, draw(sampled(DTYPES), label="dtype"), "x"))
    mask = draw(values(mask_shape, torch.bool, "mask"))
    return x, mask


@st.composite
def take_cases(draw, min_elements: int = 0):
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=min_elements, max_side=4), label="x shape")
    x = draw(values(shape, draw(sampled(DTYPES), label="dtype"), "x"))
    n = x.numel()
    index_shape = draw(shapes(min_dims=0, max_dims=2, min_side=0 if n == 0 else 1, max_side=4),
                       label="index shape")
    if n == 0:
        index_shape = (0,)
    index = draw(int_tensors(index_shape, -n, max(n - 1, -n)), label="index")
    return x, draw(any_layout(index, READ_ONLY_LAYOUTS, label="index"))


@st.composite
def where_cases(draw):
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), label="result shape")

    def part(tag: str) -> tuple[int, ...]:
        keep = draw(st.integers(0, len(shape)), label=f"{tag}: trailing dims kept")
        tail = shape[len(shape) - keep:]
        ones = draw(st.lists(st.booleans(), min_size=len(tail), max_size=len(tail)),
                    label=f"{tag}: dims set to 1")
        return tuple(1 if one else n for n, one in zip(tail, ones))

    dtype = draw(sampled((torch.float64, torch.float32, torch.int64)), label="dtype")
    condition = draw(values(part("condition"), torch.bool, "condition"))
    xs = []
    for tag in ("x", "y"):
        t = draw(values(part(tag), dtype, tag))
        if dtype.is_floating_point and t.numel() and draw(st.booleans(), label=f"{tag}: inf/nan in it"):
            t = t.clone()
            flat = t.view(-1)
            for _ in range(draw(st.integers(1, t.numel()), label=f"{tag}: how many inf/nan")):
                flat[draw(st.integers(0, t.numel() - 1), label=f"{tag}: where")] = \
                    draw(sampled(SPECIALS), label=f"{tag}: which")
        xs.append(t)
    # the condition covers every shape: make it the full shape sometimes
    return condition, xs[0], xs[1]


@st.composite
def fill_cases(draw, min_index: int = 0):
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="x shape")
    dim = draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    dtype = draw(sampled((torch.float64, torch.float32, torch.int64)), label="dtype")
    x = draw(values(shape, dtype, "x"))
    size = shape[dim]
    n = draw(st.integers(min_index, 4), label="index length")
    index = draw(int_tensors((n,), -size, size - 1), label="index")
    if dtype.is_floating_point:
        value = draw(st.one_of(st.floats(-9, 9, width=32), st.integers(-9, 9)), label="value")
    else:
        value = draw(st.integers(-9, 9), label="value")
    if draw(st.booleans(), label="value as a 0-d tensor"):
        value = torch.tensor(value, dtype=dtype)
    return x, dim, index, value


def _shape(t: torch.Tensor) -> str:
    return f"{tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}"


# ------------------------------------------------------------------ oracles

def ordinary_index_select(impl, case, why: str):
    x, dim, index = case
    return anchored(lambda: impl.index_select(fresh(x), dim, index.clone()),
                    lambda: torch.index_select(x, dim, index),
                    what=f"index_select(x {_shape(x)}, dim={dim}, index={index.tolist()}) vs "
                         f"torch.index_select ({why})")


def ordinary_take(impl, case, why: str):
    x, index = case
    return anchored(lambda: impl.take(fresh(x), fresh(index)), lambda: torch.take(x, index),
                    what=f"take(x {_shape(x)} with strides {x.stride()}, index={index.tolist()}) vs "
                         f"torch.take ({why})")


def ordinary_index_fill(impl, case, why: str):
    x, dim, index, value = case
    return anchored(lambda: impl.index_fill(fresh(x), dim, index.clone(), value),
                    lambda: torch.index_fill(x, dim, index, value),
                    what=f"index_fill(x {_shape(x)}, dim={dim}, index={index.tolist()}, "
                         f"value={value!r}) vs torch.index_fill ({why})")


# ------------------------------------------------------------------ index_select

@pytest.mark.weight(2)
@example((torch.tensor([[1, 2, 3], [4, 5, 6]]), 1, torch.tensor([2, 0, 2])))  # the spec's example
@example((torch.arange(6.).reshape(2, 3), 0, torch.zeros(0, dtype=torch.int64)))
@settings(max_examples=25)
@given(select_cases())
def test_index_select_matches_torch(impl, case):
    x, dim, index = case
    assert_same(impl.index_select(fresh(x), dim, index.clone()), torch.index_select(x, dim, index),
                what=f"index_select(x {_shape(x)}, dim={dim}, index={index.tolist()}) "
                     "(torch.index_select gives the expected)")


@settings(max_examples=12)
@given(select_cases(min_index=1), st.data())
def test_index_select_refuses_index_out_of_range(impl, case, data):
    x, dim, index = case
    size = x.size(dim)
    bad_value = data.draw(sampled((-1, -size, size, size + 2)), label="bad index value")
    bad = index.clone()
    bad[data.draw(st.integers(0, len(bad) - 1), label="where")] = bad_value
    with ordinary_index_select(impl, case, "the same case before one index value was moved out of range"):
        with expect_raises(IndexError, when=f"an index value is {bad_value} but dim {dim} has size "
                                            f"{size} (index_select does not wrap negative values)"):
            impl.index_select(fresh(x), dim, bad)


@settings(max_examples=12)
@given(select_cases(min_index=1), fill_cases(min_index=1), st.data())
def test_a_dim_out_of_range_raises_index_error(impl, select, fill, data):
    """index_select and index_fill as torch: a dim outside [-x.dim(), x.dim()) is an
    IndexError, the first one past either end included (a wrapped dim picks another axis)."""
    for name, case, call, ordinary_call in (
            ("index_select", select, lambda x, d, c: impl.index_select(x, d, c[2]), ordinary_index_select),
            ("index_fill", fill, lambda x, d, c: impl.index_fill(x, d, c[2], c[3]), ordinary_index_fill)):
        x, ndim = case[0], case[0].dim()
        bad_dim = data.draw(sampled((ndim, -ndim - 1, ndim + 1)), label=f"{name} bad dim")
        with ordinary_call(impl, case, "the same case with a dim in range"):
            with expect_raises(IndexError, when=f"{name} with dim={bad_dim} for a {ndim}-d x"):
                call(fresh(x), bad_dim, case)


# ------------------------------------------------------------------ masked_select

@pytest.mark.weight(2)
@example((torch.tensor([[1., 2., 3.], [4., 5., 6.]]), torch.tensor([True, False, True])))  # the spec's
@example((torch.tensor([1., 2.]), torch.tensor([[True, False], [True, True], [False, True]])))
@example((torch.tensor(5.), torch.tensor(True)))
@settings(max_examples=25)
@given(masked_cases())
def test_masked_select_matches_torch(impl, case):
    x, mask = case
    assert_same(impl.masked_select(fresh(x), fresh(mask)), torch.masked_select(x, mask),
                what=f"masked_select(x {_shape(x)}, mask {tuple(mask.shape)}) (torch.masked_select "
                     "gives the expected: broadcast both, select in row-major order, always 1-D)")


# ------------------------------------------------------------------ take

@pytest.mark.weight(2)
@example((torch.tensor([[1, 2, 3], [4, 5, 6]]).t(), torch.tensor([[0, 1], [-1, 2]])))  # the spec's
@example((torch.arange(12.).reshape(3, 4)[:, ::2], torch.tensor([0, 1, 2, 3, 4, 5])))
@settings(max_examples=25)
@given(take_cases())
def test_take_matches_torch(impl, case):
    x, index = case
    assert_same(impl.take(fresh(x), fresh(index)), torch.take(x, index),
                what=f"take(x {_shape(x)} with strides {x.stride()}, index={index.tolist()}) "
                     "(torch.take gives the expected: x read in row-major order of its shape, "
                     "whatever its strides; negative values from the end)")


@settings(max_examples=12)
@given(take_cases(min_elements=1), st.data())
def test_take_refuses_index_out_of_range(impl, case, data):
    x, index = case
    n = x.numel()
    bad_value = data.draw(sampled((n, n + 3, -n - 1)), label="bad index value")
    bad = torch.full((2,), bad_value, dtype=torch.int64)
    bad[0] = 0
    with ordinary_take(impl, case, "an ordinary call beside the error case"):
        with expect_raises(IndexError, when=f"an index value is {bad_value} but x has {n} elements"):
            impl.take(fresh(x), bad)


# ------------------------------------------------------------------ where

@pytest.mark.weight(2)
@example((torch.tensor([True, False]), torch.tensor([1., 2.]), torch.tensor(float("inf"))))  # the spec's
@example((torch.tensor([[True], [False]]), torch.tensor([float("nan"), 1.]), torch.tensor([2., float("-inf")])))
@settings(max_examples=25)
@given(where_cases())
def test_where_matches_torch(impl, case):
    condition, x, y = case
    got, expected = impl.where(fresh(condition), fresh(x), fresh(y)), torch.where(condition, x, y)
    blended = overflowed(got, expected)  # inf or nan where the value selected is finite: 0 * inf
    assert_same(got, expected, equal_nan=True,
                what=f"where(condition {tuple(condition.shape)}, x {_shape(x)}, y {_shape(y)}) "
                     "(torch.where gives the expected" + (
                         "; inf or nan where a finite value was selected: select, do not blend: 0 * inf is nan)"
                         if blended else ")"))


# ------------------------------------------------------------------ index_fill

@pytest.mark.weight(2)
@example((torch.zeros(2, 3), 1, torch.tensor([0, -1]), 7.0))  # the spec's example
@example((torch.arange(6).reshape(2, 3), 0, torch.tensor([1, 1]), torch.tensor(4)))
@settings(max_examples=25)
@given(fill_cases())
def test_index_fill_matches_torch(impl, case):
    x, dim, index, value = case
    assert_same(impl.index_fill(fresh(x), dim, index.clone(), value),
                torch.index_fill(x, dim, index, value),
                what=f"index_fill(x {_shape(x)}, dim={dim}, index={index.tolist()}, value={value!r}) "
                     "(torch.index_fill gives the expected; negative index values count from the end)")


@settings(max_examples=12)
@given(fill_cases(min_index=1), st.data())
def test_index_fill_refuses_index_out_of_range(impl, case, data):
    x, dim, index, value = case
    size = x.size(dim)
    bad_value = data.draw(sampled((size, size + 1, -size - 1)), label="bad index value")
    bad = index.clone()
    bad[data.draw(st.integers(0, len(bad) - 1), label="where")] = bad_value
    with ordinary_index_fill(impl, case, "the same case before one index value was moved out of range"):
        with expect_raises(IndexError, when=f"an index value is {bad_value} but dim {dim} has size {size}"):
            impl.index_fill(fresh(x), dim, bad, value)


@settings(max_examples=12)
@given(fill_cases(min_index=1))
def test_index_fill_leaves_x_unchanged(impl, case):
    x, dim, index, value = case
    given_x = x.clone()  # contiguous: the grader sees a write into it (an expanded one refuses it)
    got = impl.index_fill(given_x, dim, index.clone(), value)
    assert_arguments_unchanged(impl, what="x after index_fill (out of place: fill a clone, not x)")
    assert_same(given_x, x, what="x after index_fill (out of place: fill a clone, not x)")
    assert_ordinary(lambda: got, lambda: torch.index_fill(x, dim, index, value),
                    what=f"index_fill(x {_shape(x)}, dim={dim}, index={index.tolist()}, value={value!r}) "
                         "(torch.index_fill gives the expected)")


# ------------------------------------------------------------------ all five

@settings(max_examples=12)
@given(select_cases(min_index=1), masked_cases(), take_cases(min_elements=1), where_cases(),
       fill_cases())
def test_results_are_new_tensors(impl, select, masked, taken, chosen, filled):
    """Each result is new memory, even where a view would hold the right values (every
    slice selected, every element taken, nothing filled)."""
    x, dim, index = select
    full = torch.arange(x.size(dim))
    calls = [
        ("index_select", (fresh(x), dim, full), torch.index_select(x, dim, full)),
        ("index_select", (fresh(x), dim, index.clone()), torch.index_select(x, dim, index)),
        ("masked_select", (fresh(masked[0]), fresh(masked[1])), torch.masked_select(*masked)),
        ("take", (fresh(taken[0]), fresh(taken[1])), torch.take(*taken)),
        ("where", tuple(fresh(t) for t in chosen), torch.where(*chosen)),
        ("index_fill", (fresh(filled[0]), filled[1], filled[2][:0].clone(), filled[3]),
         filled[0].clone()),
        ("index_fill", (fresh(filled[0]), filled[1], filled[2].clone(), filled[3]),
         torch.index_fill(*filled)),
    ]
    for name, args, expected in calls:
        got = getattr(impl, name)(*args)
        assert_no_shared_memory(got, *args, what=f"{name} of {[_describe(a) for a in args]}")
        assert_ordinary_answer(got, expected, equal_nan=True,
                               what=f"{name} of {[_describe(a) for a in args]} (torch gives the expected)")


def _describe(a) -> str:
    return _shape(a) if isinstance(a, torch.Tensor) else repr(a)


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@settings(max_examples=12)
@given(select_cases(), masked_cases(), take_cases(), where_cases(), fill_cases())
def test_on_gpu_results_stay_on_the_device(impl, select, masked, taken, chosen, filled):
    """On the GPU the index and mask must be on the device too: results stay there and
    equal torch's on the CPU."""
    x, dim, index = select
    calls = [
        ("index_select", (x.cuda(), dim, index.cuda()), torch.index_select(x, dim, index)),
        ("masked_select", tuple(t.cuda() for t in masked), torch.masked_select(*masked)),
        ("take", tuple(t.cuda() for t in taken), torch.take(*taken)),
        ("where", tuple(t.cuda() for t in chosen), torch.where(*chosen)),
        ("index_fill", (filled[0].cuda(), filled[1], filled[2].cuda(), filled[3]),
         torch.index_fill(*filled)),
    ]
    for name, args, expected in calls:
        got = getattr(impl, name)(*args)
        assert isinstance(got, torch.Tensor) and got.device.type == "cuda", (
            f"{name} on cuda returned {got.device if isinstance(got, torch.Tensor) else got!r}; "
            "the result must stay on the inputs' device")
        assert_same(got.cpu(), expected, what=f"{name} on cuda", equal_nan=True)
