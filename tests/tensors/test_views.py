"""The strides of view, permute and squeeze, from sizes and strides alone, as torch computes them."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import expect_raises, is_tuple_of_ints
from tests.properties import anchored
from tests.strategies import reusable, row_major_strides, sampled, shapes, strided_layouts

_RUNS = ("group the dims into runs from the last one (a dim joins when one step along it jumps "
         "exactly over the run so far), then hand each run out to the new dims from the right")
_PERMUTE = "each dim keeps its stride: put the strides in the order dims gives"
_SQUEEZE = "drop the stride of each size-1 dim that goes, keep the others"
_NO_TENSOR = "reason with the size and stride numbers; no tensor is needed"
pytestmark = pytest.mark.exercise(points=10, forbid={
    # what makes a view for you
    "Tensor.view": _RUNS,
    "Tensor.view_as": _RUNS,
    "Tensor.reshape": _RUNS,
    "Tensor.reshape_as": _RUNS,
    "torch.reshape": _RUNS,
    "Tensor.flatten": _RUNS,
    "torch.flatten": _RUNS,
    "Tensor.unflatten": _RUNS,
    "torch.unflatten": _RUNS,
    "torch.view_copy": _RUNS,
    "torch.ops.aten._unsafe_view": _RUNS,  # view without autograd: no Python name but torch.ops'
    "Tensor.permute": _PERMUTE,
    "torch.permute": _PERMUTE,
    "Tensor.transpose": _PERMUTE,
    "torch.transpose": _PERMUTE,
    "Tensor.movedim": _PERMUTE,
    "torch.movedim": _PERMUTE,
    "Tensor.moveaxis": _PERMUTE,
    "torch.moveaxis": _PERMUTE,
    "Tensor.swapaxes": _PERMUTE,
    "torch.swapaxes": _PERMUTE,
    "Tensor.swapdims": _PERMUTE,
    "torch.swapdims": _PERMUTE,
    "torch.einsum": _PERMUTE,
    "Tensor.squeeze": _SQUEEZE,
    "Tensor.squeeze_": _SQUEEZE,
    "torch.squeeze": _SQUEEZE,
    # what makes a tensor of any size and stride to ask
    "torch.empty_strided": _NO_TENSOR,
    "Tensor.as_strided": _NO_TENSOR,
    "torch.as_strided": _NO_TENSOR,
    "Tensor.set_": _NO_TENSOR,
    # torch's own Python helpers that answer from the numbers
    "torch._subclasses.fake_impls._compute_stride": _RUNS,
    "torch._refs._reshape_view_helper": _RUNS,
    "torch._refs._reshape_view_helper_core_alg": _RUNS,
    "torch._prims_common.infer_size": _RUNS,
    "torch._prims_common.apply_perm": _PERMUTE,
})


# ------------------------------------------------------------------ oracles and helpers

def torch_view(size: tuple[int, ...], stride: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``x.view(shape).stride()``, or None where torch says no view has that shape."""
    try:
        return tuple(torch.empty_strided(size, stride).view(shape).stride())
    except RuntimeError as err:
        if "view size is not compatible" in str(err):
            return None
        raise


def torch_permute(size: tuple[int, ...], stride: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(torch.empty_strided(size, stride).permute(dims).stride())


def torch_squeeze(size: tuple[int, ...], stride: tuple[int, ...], dim: int | None) -> tuple[int, ...]:
    x = torch.empty_strided(size, stride)
    return tuple((x.squeeze() if dim is None else x.squeeze(dim)).stride())


def strides_or_none(got: Any, call: str) -> tuple[int, ...] | None:
    """The answer as a tuple of ints (a list or torch.Size too) or None; the exact type has
    its own property."""
    if got is None:
        return None
    if isinstance(got, (tuple, list)) and all(isinstance(s, int) for s in got):
        return tuple(got)
    raise AssertionError(f"{call} returned {got!r}; expected a tuple of ints or None")


def as_int_tuple(got: Any, call: str) -> tuple[int, ...]:
    if isinstance(got, (tuple, list)) and all(isinstance(s, int) for s in got):
        return tuple(got)
    raise AssertionError(f"{call} returned {got!r}; expected a tuple of ints")


def view_call(size, stride, shape) -> str:
    return f"view_strides({size}, {stride}, {shape})"


def check_view(impl, size, stride, shape) -> None:
    """view_strides agrees with torch on this case."""
    call = view_call(size, stride, shape)
    got = strides_or_none(impl.view_strides(size, stride, shape), call)
    expected = torch_view(size, stride, shape)
    assert got == expected, (f"{call} returned {got}, but torch.empty_strided{(size, stride)}"
                             f".view({shape}).stride() is {expected}")


def ordinary_view(impl, size, stride, shape, why: str):
    """An anchor: view_strides of a case torch can view agrees with torch."""
    return anchored(lambda: impl.view_strides(size, stride, shape), lambda: torch_view(size, stride, shape),
                    what=f"{view_call(size, stride, shape)} vs torch's view ({why})")


def ordinary_permute(impl, size, stride, dims, why: str):
    return anchored(lambda: impl.permute_strides(size, stride, dims), lambda: torch_permute(size, stride, dims),
                    what=f"permute_strides({size}, {stride}, {dims}) vs torch's permute ({why})")


def ordinary_squeeze(impl, size, stride, dim, why: str):
    return anchored(lambda: impl.squeeze_strides(size, stride, dim), lambda: torch_squeeze(size, stride, dim),
                    what=f"squeeze_strides({size}, {stride}, {dim}) vs torch's squeeze ({why})")


# ------------------------------------------------------------------ strategies

def _divisors(n: int) -> tuple[int, ...]:
    return tuple(a for a in range(1, n + 1) if n % a == 0)


@reusable
@st.composite
def regrouped(draw, size: tuple[int, ...]) -> tuple[int, ...]:
    """``size`` with a few dims merged, split, or size-1 dims added or dropped: the shapes
    a view is usually asked for."""
    dims = list(size)
    for _ in range(draw(st.integers(0, 3), label="regroupings")):
        op = draw(sampled(("merge", "split", "insert 1", "drop 1")), label="regrouping")
        if op == "merge" and len(dims) >= 2:
            i = draw(st.integers(0, len(dims) - 2), label="merged at")
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
        elif op == "split" and dims:
            i = draw(st.integers(0, len(dims) - 1), label="split at")
            n = dims[i]
            a = draw(sampled(_divisors(n)), label="first part") if n else draw(st.integers(0, 3), label="beside 0")
            dims[i:i + 1] = [a, n // a] if n else list(draw(sampled(((0, a), (a, 0))), label="where the 0 goes"))
        elif op == "insert 1":
            dims.insert(draw(st.integers(0, len(dims)), label="1 inserted at"), 1)
        elif op == "drop 1" and 1 in dims:
            ones = [i for i, n in enumerate(dims) if n == 1]
            del dims[draw(sampled(tuple(ones)), label="1 dropped at")]
    return tuple(dims)


@reusable
@st.composite
def factored(draw, numel: int) -> tuple[int, ...]:
    """A shape of ``numel`` elements drawn afresh: factors of it in any order."""
    if numel == 0:
        dims = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3), label="sizes beside a 0")
        dims.insert(draw(st.integers(0, len(dims)), label="0 at"), 0)
        return tuple(dims)
    dims, left = [], numel
    for _ in range(draw(st.integers(0, 3), label="factors")):
        a = draw(sampled(_divisors(left)), label="factor")
        dims.append(a)
        left //= a
    dims.insert(draw(st.integers(0, len(dims)), label="the rest at"), left)
    return tuple(dims)


@reusable
@st.composite
def with_minus_one(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with one size (that leaves no 0 beside it) written -1, when one can be."""
    fit = [d for d in range(len(shape)) if math.prod(shape[:d] + shape[d + 1:]) > 0]
    if not fit:
        return shape
    d = draw(sampled(tuple(fit)), label="dim written -1")
    return shape[:d] + (-1,) + shape[d + 1:]


@reusable
@st.composite
def view_cases(draw, layouts: st.SearchStrategy | None = None) -> tuple[tuple[int, ...], ...]:
    """(size, stride, shape): a layout (of every kind the notes discuss, unless ``layouts``
    says), and a shape of its element count (regrouped, drawn afresh, flat, the same),
    sometimes with a -1."""
    size, stride = draw(layouts if layouts is not None else strided_layouts(), label="layout")
    kind = draw(sampled(("regrouped", "factored", "flat", "same")), label="shape")
    numel = math.prod(size)
    if kind == "regrouped":
        shape = draw(regrouped(size))
    elif kind == "factored":
        shape = draw(factored(numel))
    else:
        shape = (numel,) if kind == "flat" else tuple(size)
    if draw(st.booleans(), label="a -1 in shape"):
        shape = draw(with_minus_one(shape))
    return size, stride, shape


@st.composite
def no_view_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str]:
    """(size, stride, shape, why): a layout of two runs or more (transposed, a gap between
    rows, a narrowed last dim, a stride-0 expand) flattened: no view has that shape."""
    size = draw(shapes(min_dims=2, max_dims=4, min_side=2, max_side=4), label="size")
    how = draw(sampled(("transposed", "rows apart", "narrowed", "expanded")), label="layout")
    d = draw(st.integers(0, len(size) - 2), label="first of the two dims")
    base = row_major_strides(size)
    if how == "transposed":
        order = list(range(len(size)))
        order[d], order[d + 1] = d + 1, d
        inner = row_major_strides(tuple(size[i] for i in order))
        stride = tuple(inner[order.index(i)] for i in range(len(size)))
    elif how == "rows apart":
        step = draw(st.integers(2, 3), label="step")
        stride = tuple(s * step if i <= d else s for i, s in enumerate(base))
    elif how == "narrowed":
        extra = draw(st.integers(1, 2), label="elements cut from each row")
        full = size[:d + 1] + (size[d + 1] + extra,) + size[d + 2:]
        stride = row_major_strides(full)
    else:
        stride = tuple(0 if i == d else s for i, s in enumerate(base))
    shape = (math.prod(size),)
    if draw(st.booleans(), label="written -1"):
        shape = (-1,)
    return size, stride, shape, f"{how} at dims {d} and {d + 1}"


@st.composite
def views_of_non_contiguous(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, shape): a non-contiguous layout that still has a view of that shape:
    a transpose whose dims are cut, channels-last data with H and W merged, rows apart
    with each row cut, an expand with its dims cut."""
    how = draw(sampled(("transposed", "channels last", "rows apart", "expanded")), label="layout")
    a = draw(st.integers(2, 4), label="a")
    b1, b2 = draw(st.integers(1, 3), label="b1"), draw(st.integers(2, 3), label="b2")
    b = b1 * b2
    if how == "transposed":  # torch.empty(b, a).t(), its rows cut in two
        return (a, b), (1, a), (a, b1, b2)
    if how == "channels last":  # torch.empty(N, H, W, C).permute(0, 3, 1, 2), H and W merged
        n, c, h, w = a, draw(st.integers(2, 3), label="C"), b1 + 1, b2
        return (n, c, h, w), (h * w * c, 1, w * c, c), (n, c, h * w)
    if how == "rows apart":  # torch.empty(2 * a, b)[::2], each row cut in two
        return (a, b), (2 * b, 1), (a, b1, b2)
    return (a, b), (0, 1), (a, b1, b2)  # torch.empty(1, b).expand(a, b)


@st.composite
def size_one_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, shape): a layout with size-1 dims (any stride there) viewed with
    size-1 dims added, dropped or moved, and the dims between them maybe merged."""
    size = list(draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), label="size"))
    ones = draw(st.sets(st.integers(0, len(size) - 1), min_size=1), label="size-1 dims")
    size = [1 if i in ones else n for i, n in enumerate(size)]
    stride = list(row_major_strides(tuple(size)))
    if draw(st.booleans(), label="transposed"):
        stride = list(reversed(row_major_strides(tuple(reversed(size)))))
    for i in sorted(ones):
        stride[i] = draw(st.integers(0, 12), label=f"stride of size-1 dim {i}")
    shape = [n for n in size if n != 1]
    for _ in range(draw(st.integers(0, 2), label="merges of neighbours")):  # across the size-1 dims
        if len(shape) >= 2:
            i = draw(st.integers(0, len(shape) - 2), label="merged at")
            shape[i:i + 2] = [shape[i] * shape[i + 1]]
    for _ in range(draw(st.integers(0, 3), label="size-1 dims in the view")):
        shape.insert(draw(st.integers(0, len(shape)), label="1 at"), 1)
    return tuple(size), tuple(stride), tuple(shape)


@st.composite
def empty_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, shape): a layout with no elements (any strides), viewed as itself or
    as another shape with a 0."""
    size = list(draw(shapes(min_dims=1, max_dims=4, min_side=0, max_side=3), label="size"))
    if 0 not in size:
        size[draw(st.integers(0, len(size) - 1), label="dim made empty")] = 0
    stride = draw(st.lists(st.integers(0, 12), min_size=len(size), max_size=len(size)), label="stride")
    shape = tuple(size) if draw(st.booleans(), label="the same shape") else draw(factored(0))
    return tuple(size), tuple(stride), shape


@reusable
@st.composite
def bad_shapes(draw, size: tuple[int, ...]) -> tuple[tuple[int, ...], str]:
    """A shape that is no shape for ``size``'s elements, and why."""
    numel = math.prod(size)
    how = draw(sampled(("two -1", "below -1", "count", "-1 beside 0")), label="how the shape is wrong")
    if how == "two -1":
        return (-1, -1, *draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))), "more than one -1"
    if how == "below -1":
        return (numel, draw(st.integers(-4, -2), label="size below -1")), "a size below -1"
    if how == "count":
        return (numel + draw(st.integers(1, 3), label="elements too many"),), "a different element count"
    return (0, -1), "a -1 beside a 0"


@st.composite
def permute_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, dims): a layout and a permutation of its dims, some written negative."""
    size, stride = draw(strided_layouts(), label="layout")
    order = draw(st.permutations(range(len(size))), label="order")
    negative = draw(st.sets(st.integers(0, max(len(size) - 1, 0))) if size else st.just(set()),
                    label="dims written negative")
    return size, stride, tuple(d - len(size) if i in negative else d for i, d in enumerate(order))


@st.composite
def squeeze_layouts(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A layout with size-1 dims (any stride there), from the kinds the notes discuss."""
    size, stride = draw(strided_layouts(), label="layout")
    if size and 1 not in size and draw(st.booleans(), label="a size-1 dim added"):
        d = draw(st.integers(0, len(size)), label="at")
        size, stride = size[:d] + (1,) + size[d:], stride[:d] + (draw(st.integers(0, 12)),) + stride[d:]
    return size, stride


@st.composite
def squeeze_dim_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """(size, stride, dim): a layout with size-1 dims and a dim in range, of size 1 or not,
    maybe written negative."""
    size, stride = draw(squeeze_layouts())
    top = max(len(size), 1)
    return size, stride, draw(st.integers(-top, top - 1), label="dim")


@st.composite
def bad_dims_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], type, str]:
    """(size, stride, dims, bad, error, why): a permute case, and dims made wrong in one way:
    one entry too many or too few, a dim twice (ValueError), a dim out of range (IndexError)."""
    size, stride, dims = draw(permute_cases())
    ndim = len(size)
    kinds = ("too many",) + (("too few", "out of range") if ndim >= 1 else ()) + (("twice",) if ndim >= 2 else ())
    how = draw(sampled(kinds), label="how dims is wrong")
    if how == "too many":
        bad = (*dims, ndim - 1 if ndim else 0)
        return size, stride, dims, bad, ValueError, f"dims of length {len(bad)} for a {ndim}-d tensor"
    if how == "too few":
        return size, stride, dims, dims[:-1], ValueError, f"dims of length {ndim - 1} for a {ndim}-d tensor"
    if how == "twice":
        i = draw(st.integers(1, ndim - 1), label="entry made a repeat")
        first = dims[0] % ndim
        again = draw(sampled((first, first - ndim)), label="the repeat written as")
        bad = dims[:i] + (again,) + dims[i + 1:]
        return size, stride, dims, bad, ValueError, f"dim {first} comes twice"
    far = draw(sampled((ndim, ndim + 1, -ndim - 1)), label="dim out of range")
    i = draw(st.integers(0, ndim - 1), label="entry made out of range")
    bad = dims[:i] + (far,) + dims[i + 1:]
    return size, stride, dims, bad, IndexError, f"dim {far} is out of range for a {ndim}-d tensor"


CONTIGUOUS_LAYOUTS = shapes(min_dims=1, max_dims=4, min_side=1, max_side=4).map(
    lambda size: (size, row_major_strides(size)))


@st.composite
def minus_one_cases(draw) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(size, stride, shape): a contiguous layout (it has every view) and a shape of its
    elements with a -1."""
    size, stride, shape = draw(view_cases(CONTIGUOUS_LAYOUTS))
    return size, stride, draw(with_minus_one(shape))


# ------------------------------------------------------------------ view_strides

@pytest.mark.weight(4)
@example(((2, 3), (3, 1), (3, 2)))  # the spec's examples
@example(((2, 3), (3, 1), (-1,)))
@example(((3, 2), (1, 3), (6,)))
@example(((3, 2), (1, 3), (3, 1, 2)))
@example(((2, 3, 4, 4), (48, 1, 12, 3), (2, 3, 16)))
@example(((2, 3, 4, 4), (48, 1, 12, 3), (2, 48)))
@example(((), (), (1, 1)))  # a 0-d tensor
@settings(max_examples=80)
@given(view_cases())
def test_view_strides_match_torch(impl, case):
    """Where torch has no view, the same shape of a contiguous tensor is checked too, so
    that "always None" fails every example."""
    size, stride, shape = case
    check_view(impl, size, stride, shape)
    if torch_view(size, stride, shape) is None:
        check_view(impl, size, row_major_strides(size), shape)


@pytest.mark.weight(2)
@example(((3, 2), (1, 3), (6,), "transposed at dims 0 and 1"))
@settings(max_examples=40)
@given(no_view_cases())
def test_no_view_when_a_dim_joins_two_runs(impl, case):
    size, stride, shape, why = case
    assert torch_view(size, stride, shape) is None, "the test's case must have no view"
    call = view_call(size, stride, shape)
    with ordinary_view(impl, size, stride, size, "the same layout, viewed as its own shape"):
        got = strides_or_none(impl.view_strides(size, stride, shape), call)
        assert got is None, (
            f"{call} returned {got}, but torch has no such view ({why}): the flat dim would "
            "join elements of two runs, so the answer is None (reshape would have to copy)")


@pytest.mark.weight(2)
@example(((2, 3, 4, 4), (48, 1, 12, 3), (2, 3, 16)))
@example(((3, 2), (1, 3), (3, 2, 1)))
@settings(max_examples=40)
@given(views_of_non_contiguous())
def test_views_of_non_contiguous_tensors(impl, case):
    size, stride, shape = case
    call = view_call(size, stride, shape)
    got = strides_or_none(impl.view_strides(size, stride, shape), call)
    expected = torch_view(size, stride, shape)
    assert got is not None, (
        f"{call} returned None, but torch views it with strides {expected}: the tensor is not "
        "contiguous, yet no new dim joins two runs (contiguity is enough for a view, not needed)")
    assert got == expected, (f"{call} returned {got}, but torch.empty_strided{(size, stride)}"
                             f".view({shape}).stride() is {expected}")


@pytest.mark.weight(2)
@example(((3, 1), (1, 7), (3, 1)))
@example(((1, 3, 1), (12, 8, 11), (1, 1, 3, 1)))
@example(((2, 1, 3), (3, 99, 1), (6,)))  # the size-1 dim's stride is never used
@settings(max_examples=50)
@given(size_one_cases())
def test_size_one_dims_of_the_view(impl, case):
    size, stride, shape = case
    call = view_call(size, stride, shape)
    got = strides_or_none(impl.view_strides(size, stride, shape), call)
    expected = torch_view(size, stride, shape)
    assert got == expected, (
        f"{call} returned {got}, but torch gives {expected}: a size-1 dim of x never breaks a run "
        "(its stride is never used), and a new dim of size 1 belongs to the run of the new dim on "
        "its right (the last run when there is none), with the stride (run's base) x (elements of "
        "the run handed out to its right)")


@example(((2, 3), (3, 1), (-1, 3)))
@settings(max_examples=30)
@given(minus_one_cases())
def test_minus_one_is_inferred(impl, case):
    size, stride, shape = case
    call = view_call(size, stride, shape)
    got = strides_or_none(impl.view_strides(size, stride, shape), call)
    expected = torch_view(size, stride, shape)
    assert got == expected, (f"{call} returned {got}, but torch gives {expected}: the -1 stands for "
                             "the size that makes the element counts equal")


@example(((0, 2), (10, 2), (0, 2)))
@example(((0, 3), (7, 2), (3, 0)))
@settings(max_examples=30)
@given(empty_cases())
def test_empty_tensors_always_have_a_view(impl, case):
    size, stride, shape = case
    call = view_call(size, stride, shape)
    with ordinary_view(impl, (3, 2), (1, 3), (3, 1, 2), "a transposed tensor with elements"):
        got = strides_or_none(impl.view_strides(size, stride, shape), call)
        expected = torch_view(size, stride, shape)
        assert got == expected, (
            f"{call} returned {got}, but torch gives {expected}: a tensor with no elements always "
            "has a view; the same shape keeps its strides, another gets torch.empty(shape)'s strides")


@settings(max_examples=30)
@given(view_cases(), st.data())
def test_shape_that_does_not_fit_raises_value_error(impl, case, data):
    size, stride, shape = case
    bad, why = data.draw(bad_shapes(size))
    with ordinary_view(impl, size, row_major_strides(size), shape, "the same sizes, contiguous"):
        with expect_raises(ValueError, when=f"shape {bad} does not fit size {size} ({why})"):
            impl.view_strides(size, stride, bad)


# ------------------------------------------------------------------ permute_strides

@pytest.mark.weight(3)
@example(((2, 4, 4, 3), (48, 12, 3, 1), (0, 3, 1, 2)))  # the spec's examples
@example(((2, 3), (3, 1), (-1, 0)))
@example(((2, 3, 4), (12, 4, 1), (1, 2, 0)))  # its inverse is (2, 0, 1)
@settings(max_examples=60)
@given(permute_cases())
def test_permute_strides_match_torch(impl, case):
    size, stride, dims = case
    call = f"permute_strides({size}, {stride}, {dims})"
    got = as_int_tuple(impl.permute_strides(size, stride, dims), call)
    expected = torch_permute(size, stride, dims)
    assert got == expected, (f"{call} returned {got}, but torch.empty_strided{(size, stride)}"
                             f".permute({dims}).stride() is {expected}: dim i of the result is "
                             "dim dims[i] of x, with its stride")


@example((2, 4, 4, 3))
@settings(max_examples=20)
@given(shapes(min_dims=4, max_dims=4, min_side=2, max_side=4))
def test_nhwc_to_nchw_is_a_permute_not_a_view(impl, nhwc):
    n, h, w, c = nhwc
    stride = row_major_strides(nhwc)
    dims = (0, 3, 1, 2)
    call = f"permute_strides({nhwc}, {stride}, {dims})"
    got = as_int_tuple(impl.permute_strides(nhwc, stride, dims), call)
    expected = torch_permute(nhwc, stride, dims)
    as_view = row_major_strides((n, c, h, w))
    assert got != as_view, (
        f"{call} returned {got}: those are the strides of view({n}, {c}, {h}, {w}) of the NHWC data, "
        f"which reads the memory in the old order; permute keeps each dim's stride: {expected}")
    assert got == expected, f"{call} returned {got}, but torch's permute gives {expected}"


@settings(max_examples=30)
@given(bad_dims_cases())
def test_bad_dims_raise(impl, case):
    size, stride, dims, bad, error, why = case
    with ordinary_permute(impl, size, stride, dims, "the same layout, dims a permutation"):
        with expect_raises(error, when=f"dims {bad} for size {size}: {why}"):
            impl.permute_strides(size, stride, bad)


# ------------------------------------------------------------------ squeeze_strides

@pytest.mark.weight(2)
@example(((2, 1, 3, 1), (3, 3, 1, 1)))  # the spec's example
@settings(max_examples=40)
@given(squeeze_layouts())
def test_squeeze_all_matches_torch(impl, layout):
    size, stride = layout
    call = f"squeeze_strides({size}, {stride}, None)"
    got = as_int_tuple(impl.squeeze_strides(size, stride, None), call)
    expected = torch_squeeze(size, stride, None)
    assert got == expected, (f"{call} returned {got}, but torch.empty_strided{(size, stride)}"
                             f".squeeze().stride() is {expected}: every size-1 dim goes, the "
                             "others keep their strides")


@pytest.mark.weight(2)
@example(((2, 1, 3, 1), (3, 3, 1, 1), 1))  # the spec's examples
@example(((2, 1, 3, 1), (3, 3, 1, 1), 0))
@example(((), (), -1))  # a 0-d tensor stays 0-d
@settings(max_examples=40)
@given(squeeze_dim_cases())
def test_squeeze_dim_matches_torch(impl, case):
    size, stride, dim = case
    call = f"squeeze_strides({size}, {stride}, {dim})"
    got = as_int_tuple(impl.squeeze_strides(size, stride, dim), call)
    expected = torch_squeeze(size, stride, dim)
    kept = "" if not size or size[dim] == 1 else f" (dim {dim} has size {size[dim]}: nothing goes, no error)"
    assert got == expected, (f"{call} returned {got}, but torch.empty_strided{(size, stride)}"
                             f".squeeze({dim}).stride() is {expected}{kept}")


@settings(max_examples=25)
@given(squeeze_layouts(), st.integers(0, 2), st.booleans())
def test_squeeze_dim_out_of_range_raises_index_error(impl, layout, beyond, negative):
    size, stride = layout
    top = max(len(size), 1)
    dim = -top - 1 - beyond if negative else top + beyond
    with ordinary_squeeze(impl, size, stride, None, "the same layout, every size-1 dim"):
        with expect_raises(IndexError, when=f"dim {dim} is out of range for size {size}"):
            impl.squeeze_strides(size, stride, dim)


# ------------------------------------------------------------------ all three

@settings(max_examples=25)
@given(view_cases(), st.sampled_from(["lengths differ", "a size is negative"]), st.data())
def test_bad_layout_raises_value_error(impl, case, how, data):
    size, stride, shape = case
    if how == "lengths differ":
        bad_size, bad_stride = size, stride + (1,)
    else:
        bad_size = (size[0] if size else 2, -data.draw(st.integers(1, 3), label="negative size"))
        bad_stride = (1, 1)
    when = f"size {bad_size} and stride {bad_stride}: {how}"
    dims = tuple(range(len(bad_size)))
    with ordinary_view(impl, size, row_major_strides(size), shape, "a valid layout"), \
            ordinary_permute(impl, size, stride, tuple(range(len(size))), "a valid layout"), \
            ordinary_squeeze(impl, size, stride, None, "a valid layout"):
        with expect_raises(ValueError, when=when):
            impl.view_strides(bad_size, bad_stride, (1,))
        with expect_raises(ValueError, when=when):
            impl.permute_strides(bad_size, bad_stride, dims)
        with expect_raises(ValueError, when=when):
            impl.squeeze_strides(bad_size, bad_stride, None)


@settings(max_examples=25)
@given(view_cases(), permute_cases())
def test_return_types(impl, case, permuted):
    size, stride, shape = case
    contiguous = row_major_strides(size)
    with ordinary_view(impl, size, contiguous, shape, "beside the types"), \
            ordinary_permute(impl, *permuted, "beside the types"), \
            ordinary_squeeze(impl, size, stride, None, "beside the types"):
        for got, call in ((impl.view_strides(size, contiguous, shape), view_call(size, contiguous, shape)),
                          (impl.permute_strides(*permuted), f"permute_strides{permuted}"),
                          (impl.squeeze_strides(size, stride, None), f"squeeze_strides({size}, {stride}, None)")):
            assert is_tuple_of_ints(got), (f"{call} returned {got!r}; expected a tuple of Python ints, "
                                           "like Tensor.stride()")
        got = impl.view_strides(*_NO_VIEW)
        assert got is None, f"{view_call(*_NO_VIEW)} returned {got!r}; expected None (no view exists)"


_NO_VIEW = ((3, 2), (1, 3), (6,))  # torch.empty(2, 3).t() flattened
