"""stack, cat, split and chunk by hand, equal to torch's own, corner cases included."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_no_shared_memory, assert_ordinary
from tests.strategies import VALUE_LAYOUTS, copy_in_layout, layouts, mismatched_shapes, relaid, sampled, shapes

_JOIN = ("make the result with torch.empty (its shape, dtype and device) and copy each tensor "
         "into its place (select for stack, narrow for cat)")
_SPLIT = "cut x with narrow (or a slice) along dim: each piece is a view of x"
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.stack": _JOIN,
    "torch._stack": _JOIN,
    "torch.hstack": _JOIN,
    "torch.vstack": _JOIN,
    "torch.dstack": _JOIN,
    "torch.column_stack": _JOIN,
    "torch.row_stack": _JOIN,
    "torch.cat": _JOIN,
    "torch.concat": _JOIN,
    "torch.concatenate": _JOIN,
    "torch.nested.nested_tensor": _JOIN,
    "torch.nested.as_nested_tensor": _JOIN,
    "torch.nested.to_padded_tensor": _JOIN,
    "Tensor.to_padded_tensor": _JOIN,
    "torch.nn.utils.rnn.pad_sequence": _JOIN,
    "torch._C._nn.pad_sequence": _JOIN,
    "torch.split": _SPLIT,
    "Tensor.split": _SPLIT,
    "torch.split_with_sizes": _SPLIT,
    "Tensor.split_with_sizes": _SPLIT,
    "torch.unsafe_split": _SPLIT,
    "Tensor.unsafe_split": _SPLIT,
    "torch.unsafe_split_with_sizes": _SPLIT,
    "Tensor.unsafe_split_with_sizes": _SPLIT,
    "torch.chunk": _SPLIT,
    "Tensor.chunk": _SPLIT,
    "torch.unsafe_chunk": _SPLIT,
    "Tensor.unsafe_chunk": _SPLIT,
    "torch.tensor_split": _SPLIT,
    "Tensor.tensor_split": _SPLIT,
    "torch.hsplit": _SPLIT,
    "Tensor.hsplit": _SPLIT,
    "torch.vsplit": _SPLIT,
    "Tensor.vsplit": _SPLIT,
    "torch.dsplit": _SPLIT,
    "Tensor.dsplit": _SPLIT,
})

# float16 runs on the CPU too: the four only copy or view values, so everything is exact
DTYPES = (torch.float64, torch.float32, torch.int64, torch.bool, torch.float16)
# the inputs are only read (or viewed): any layout, stride-0 expanded ones included
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
DIM_LEFT_OUT = " (dim left out: the default)"


# ------------------------------------------------------------------ cases

def values(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Small integers from torch's generator (reseeded per example): only the structure is
    drawn, which is what shrinks."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    return torch.randint(-9, 10, shape).to(dtype)


def shapes_text(tensors: tuple[torch.Tensor, ...]) -> str:
    return "[" + ", ".join(str(tuple(t.shape)) for t in tensors) + "]"


class Joined(NamedTuple):
    """A call of stack or cat: the tensors (each in the layout drawn for it) and dim."""

    fn: str
    tensors: tuple[torch.Tensor, ...]
    dim: int
    spelled: bool = True  # whether dim=0 is written out or left out (the default)

    def args(self) -> tuple[Any, ...]:
        """Fresh copies, each in its layout; dim left out where it is 0 and not spelled."""
        fresh = [copy_in_layout(t) for t in self.tensors]
        return (fresh,) if self.dim == 0 and not self.spelled else (fresh, self.dim)

    def call(self, impl) -> Any:
        return getattr(impl, self.fn)(*self.args())

    def expected(self) -> torch.Tensor:
        return getattr(torch, self.fn)(list(self.tensors), self.dim)

    def text(self) -> str:
        dtype = self.tensors[0].dtype if self.tensors else torch.float64
        if self.dim == 0 and not self.spelled:
            return f"{self.fn}({dtype} tensors of shapes {shapes_text(self.tensors)})" + DIM_LEFT_OUT
        return f"{self.fn}({dtype} tensors of shapes {shapes_text(self.tensors)}, dim={self.dim})"


class Cut(NamedTuple):
    """A call of split or chunk: x (in the layout drawn for it), how to cut it, and dim."""

    fn: str
    x: torch.Tensor
    how: int | list[int] | tuple[int, ...]  # split_size_or_sections, or chunks
    dim: int
    spelled: bool = True

    def args(self) -> tuple[Any, ...]:
        x = copy_in_layout(self.x)
        how = list(self.how) if isinstance(self.how, list) else self.how
        return (x, how) if self.dim == 0 and not self.spelled else (x, how, self.dim)

    def expected(self, x: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        return tuple(getattr(torch, self.fn)(self.x if x is None else x, self.how, self.dim))

    def text(self) -> str:
        head = f"{self.fn}({self.x.dtype} x of shape {tuple(self.x.shape)}, {self.how}"
        if self.dim == 0 and not self.spelled:
            return head + ")" + DIM_LEFT_OUT
        return head + f", dim={self.dim})"


@st.composite
def laid_out(draw, shape: tuple[int, ...], dtype: torch.dtype, label: str) -> torch.Tensor:
    return draw(layouts(len(shape), READ_ONLY_LAYOUTS, label))(values(shape, dtype))


def dims(ndim: int) -> st.SearchStrategy[int]:
    """A dim in range for ``ndim`` places, 0 (the default) often."""
    return st.one_of(st.just(0), st.integers(-ndim, ndim - 1))


@st.composite
def stack_cases(draw, negative: bool = False) -> Joined:
    """1-4 tensors of one shape (0-3 dims, sides 0-3) and dtype, each in its own layout,
    and a dim of the result (only negative ones with ``negative``)."""
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), label="shape")
    dtype = draw(sampled(DTYPES), label="dtype")
    count = draw(st.integers(1, 4), label="number of tensors")
    tensors = tuple(draw(laid_out(shape, dtype, f"tensors[{i}]")) for i in range(count))
    places = len(shape) + 1
    dim = draw(st.integers(-places, -1) if negative else dims(places), label="dim")
    return Joined("stack", tensors, dim, spelled=draw(st.booleans(), label="dim=0 spelled out"))


@st.composite
def cat_cases(draw) -> Joined:
    """1-4 tensors (1-3 dims) of one dtype, equal except along dim (0-3 there)."""
    shape = list(draw(shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), label="shape"))
    dtype = draw(sampled(DTYPES), label="dtype")
    dim = draw(dims(len(shape)), label="dim")
    tensors = []
    for i in range(draw(st.integers(1, 4), label="number of tensors")):
        shape[dim] = draw(st.integers(0, 3), label=f"size of tensors[{i}] along dim")
        tensors.append(draw(laid_out(tuple(shape), dtype, f"tensors[{i}]")))
    return Joined("cat", tuple(tensors), dim, spelled=draw(st.booleans(), label="dim=0 spelled out"))


@st.composite
def legacy_cat_cases(draw) -> Joined:
    """cat_cases with 1-2 empty 1-D tensors of shape (0,) put among the tensors."""
    case = draw(cat_cases())
    tensors = list(case.tensors)
    for _ in range(draw(st.integers(1, 2), label="(0,) tensors")):
        where = draw(st.integers(0, len(tensors)), label="(0,) tensor at")
        tensors.insert(where, torch.empty(0, dtype=tensors[0].dtype))
    return case._replace(tensors=tuple(tensors))


@st.composite
def cut_x(draw, min_side: int = 0) -> tuple[torch.Tensor, int]:
    """x (1-3 dims, 0-6 along the cut dim, any layout) and the dim to cut along."""
    shape = list(draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), label="shape"))
    dim = draw(dims(len(shape)), label="dim")
    shape[dim] = draw(st.integers(min_side, 6), label="size along dim")
    dtype = draw(sampled(DTYPES), label="dtype")
    return draw(laid_out(tuple(shape), dtype, "x")), dim


@st.composite
def split_size_cases(draw) -> Cut:
    x, dim = draw(cut_x())
    n = x.shape[dim]
    size = draw(st.integers(0 if n == 0 else 1, n + 2), label="split_size")
    return Cut("split", x, size, dim, spelled=draw(st.booleans(), label="dim=0 spelled out"))


@st.composite
def sections(draw, n: int) -> list[int]:
    """Sizes >= 0 adding up to n (zeros among them)."""
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4), label="cut points"))
    points = [0, *cuts, n]
    return [b - a for a, b in itertools.pairwise(points)]


@st.composite
def split_sections_cases(draw) -> Cut:
    x, dim = draw(cut_x())
    parts = draw(sections(x.shape[dim]))
    how = tuple(parts) if draw(st.booleans(), label="sections as a tuple") else parts
    return Cut("split", x, how, dim, spelled=draw(st.booleans(), label="dim=0 spelled out"))


@st.composite
def chunk_cases(draw) -> Cut:
    x, dim = draw(cut_x())
    chunks = draw(st.integers(1, 7), label="chunks")
    return Cut("chunk", x, chunks, dim, spelled=draw(st.booleans(), label="dim=0 spelled out"))


# ------------------------------------------------------------------ checks

def pieces(got: Any, call: str) -> tuple[torch.Tensor, ...]:
    """The answer's pieces, from a tuple or a list (the exact type has its own property)."""
    if isinstance(got, (tuple, list)):
        return tuple(got)
    raise AssertionError(f"{call} returned {type(got).__name__}; expected a tuple of tensors")


def check_joined(impl, case: Joined, why: str) -> None:
    assert_same(case.call(impl), case.expected(), what=f"{case.text()} ({why})")


def check_cut(impl, case: Cut, why: str) -> None:
    got = pieces(getattr(impl, case.fn)(*case.args()), case.text())
    assert_same(got, case.expected(), what=f"{case.text()} ({why})")


def ordinary_joined(impl, case: Joined, why: str):
    """An anchor: stack or cat of a valid case equals torch's."""
    return anchored(lambda: case.call(impl), case.expected,
                    what=f"{case.text()} vs torch.{case.fn} ({why})")


def ordinary_cut(impl, case: Cut, why: str):
    """An anchor: split or chunk of a valid case equals torch's, piece by piece."""
    return anchored(lambda: check_cut(impl, case, why))


def _starts(t: torch.Tensor) -> tuple[int, int]:
    return t.untyped_storage().data_ptr(), t.data_ptr()


def check_views(got: tuple[torch.Tensor, ...], x: torch.Tensor, expected: tuple[torch.Tensor, ...],
                call: str) -> None:
    """Each piece with elements lies in x's memory where torch's does, with its strides
    (on the dims of size above 1: a stride along a size-1 dim is never used)."""
    storage, start = _starts(x)
    for i, (g, e) in enumerate(zip(got, expected)):
        if e.numel() == 0 or not isinstance(g, torch.Tensor) or g.shape != e.shape:
            continue  # a piece of the wrong shape: the comparison of the values says so
        g_storage, g_start = _starts(g)
        assert g_storage == storage, (
            f"{call}: piece {i} is a copy, not a view of x: split and chunk return views, which "
            "share x's memory (writing into a piece writes into x); use narrow or a slice")
        offset, wanted = (g_start - start) // x.element_size(), (e.data_ptr() - start) // x.element_size()
        strides = [s for n, s in zip(g.shape, g.stride()) if n > 1]
        torch_strides = [s for n, s in zip(e.shape, e.stride()) if n > 1]
        assert (offset, strides) == (wanted, torch_strides), (
            f"{call}: piece {i} starts {offset} elements into x with strides {tuple(g.stride())}; "
            f"torch's starts {wanted} elements in, with strides {tuple(e.stride())}")


# ------------------------------------------------------------------ stack

@pytest.mark.weight(3)
@example(Joined("stack", (torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])), 0, spelled=False))  # the spec's
@example(Joined("stack", (torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])), -1))
@example(Joined("stack", (torch.tensor(1.0), torch.tensor(2.0)), 0))  # 0-d tensors
@example(Joined("stack", (relaid(torch.arange(6).reshape(2, 3), "permuted"),) * 2, 1))
@settings(max_examples=30)
@given(stack_cases())
def test_stack_matches_torch(impl, case):
    check_joined(impl, case, "torch.stack gives the expected")


@pytest.mark.weight(2)
@example(Joined("stack", (torch.arange(9).reshape(3, 3), torch.arange(9, 18).reshape(3, 3)), -1))
@settings(max_examples=15)
@given(stack_cases(negative=True))
def test_stack_negative_dim_counts_in_the_result(impl, case):
    got = case.call(impl)
    expected = case.expected()
    ndim = case.tensors[0].dim()
    assert_same(got, expected, what=f"{case.text()} (the result has {ndim + 1} dims, so dim={case.dim} "
                                    f"is dim {case.dim + ndim + 1} of it: wrap with ndim + 1, not ndim)")


@st.composite
def bad_stack_cases(draw) -> tuple[Joined, list[torch.Tensor], int, type, str]:
    """A valid stack case, and (tensors, dim, error, why) made wrong in one way."""
    case = draw(stack_cases())
    shape = tuple(case.tensors[0].shape)
    places = len(shape) + 1
    how = draw(sampled(("empty", "shapes differ", "dim out of range")), label="how it is wrong")
    tensors = [copy_in_layout(t) for t in case.tensors]
    if how == "empty":
        return case, [], 0, ValueError, "tensors is an empty list"
    if how == "shapes differ":
        other = draw(mismatched_shapes(shape, label="the odd tensor's shape"))
        tensors.insert(draw(st.integers(0, len(tensors)), label="odd tensor at"),
                       values(other, case.tensors[0].dtype))
        return case, tensors, 0, ValueError, f"the shapes differ: {shapes_text(tuple(tensors))}"
    far = draw(sampled((places, places + 1, -places - 1)), label="dim out of range")
    return case, tensors, far, IndexError, f"dim={far} for {len(shape)}-d tensors (range [{-places}, {places - 1}])"


@settings(max_examples=20)
@given(bad_stack_cases())
def test_stack_errors(impl, case):
    ordinary, tensors, dim, error, why = case
    with ordinary_joined(impl, ordinary, "beside the error case"):
        with expect_raises(error, when=f"stack: {why}"):
            impl.stack(tensors, dim)


# ------------------------------------------------------------------ cat

@pytest.mark.weight(3)
@example(Joined("cat", (torch.tensor([[1, 2], [3, 4]]), torch.tensor([[5, 6]])), 0, spelled=False))
@example(Joined("cat", (torch.tensor([[1, 2], [3, 4]]),) * 2, -1))
@example(Joined("cat", (torch.empty(2, 0, 3), torch.ones(2, 4, 3)), 1))
@settings(max_examples=30)
@given(cat_cases())
def test_cat_matches_torch(impl, case):
    check_joined(impl, case, "torch.cat gives the expected")


@pytest.mark.weight(2)
@example(Joined("cat", (torch.tensor([], dtype=torch.int64), torch.tensor([[1, 2], [3, 4]])), 0))
@example(Joined("cat", (torch.ones(2, 3), torch.empty(0), torch.ones(2, 1)), -1))
@settings(max_examples=20)
@given(legacy_cat_cases())
def test_cat_skips_empty_1d_tensors(impl, case):
    """Tensors of shape (0,) among others; another tensor always takes part, so an answer
    of torch.empty(0) is wrong."""
    check_joined(impl, case, "torch.cat gives the expected: tensors of shape (0,) take no part")


@st.composite
def bad_cat_cases(draw) -> tuple[Joined, list[torch.Tensor], int, type, str]:
    """A valid cat case, and (tensors, dim, error, why) made wrong in one way."""
    case = draw(cat_cases())
    if all(tuple(t.shape) == (0,) for t in case.tensors):  # one tensor must take part
        case = case._replace(tensors=(values((1,), case.tensors[0].dtype), *case.tensors[1:]))
    first = case.tensors[0]
    ndim = first.dim()
    d = case.dim % ndim
    tensors = [copy_in_layout(t) for t in case.tensors]
    how = draw(sampled(("empty", "0-d", "dims differ", "size differs", "dim out of range")
                       if ndim >= 2 else ("empty", "0-d", "dims differ", "dim out of range")),
               label="how it is wrong")
    where = draw(st.integers(0, len(tensors)), label="odd tensor at")
    if how == "empty":
        return case, [], 0, ValueError, "tensors is an empty list"
    if how == "0-d":  # first: a 0-d tensor let through would then decide the dims
        tensors.insert(0, values((), first.dtype))
        return case, tensors, case.dim, ValueError, "a tensor is 0-d"
    if how == "dims differ":
        other = tuple(first.shape[1:])
        if draw(st.booleans(), label="one dim more") or other in ((), (0,)):  # (0,) would take no part
            other = (2, *first.shape)
        tensors.insert(where, values(tuple(other), first.dtype))
        return case, tensors, case.dim, ValueError, f"the numbers of dims differ: {shapes_text(tuple(tensors))}"
    if how == "size differs":
        e = draw(sampled(tuple(i for i in range(ndim) if i != d)), label="dim whose size differs")
        other = list(first.shape)
        other[e] = first.shape[e] + draw(st.integers(1, 2), label="by")
        tensors.insert(where, values(tuple(other), first.dtype))
        return case, tensors, case.dim, ValueError, f"a size outside dim {case.dim} differs: {shapes_text(tuple(tensors))}"
    far = draw(sampled((ndim, ndim + 1, -ndim - 1)), label="dim out of range")
    return case, tensors, far, IndexError, f"dim={far} for {ndim}-d tensors (range [{-ndim}, {ndim - 1}])"


@settings(max_examples=20)
@given(bad_cat_cases())
def test_cat_errors(impl, case):
    ordinary, tensors, dim, error, why = case
    with ordinary_joined(impl, ordinary, "beside the error case"):
        with expect_raises(error, when=f"cat: {why}"):
            impl.cat(tensors, dim)


@example(Joined("stack", (torch.tensor([1.0, 2.0]),), 0), Joined("cat", (torch.tensor([1.0, 2.0]),), 0))
@settings(max_examples=15)
@given(stack_cases(), cat_cases())
def test_results_are_new_tensors(impl, stacked, joined):
    """A new tensor even for one tensor, where a view of it would hold the right values."""
    for case in (stacked, joined):
        given_tensors, *rest = case.args()
        got = getattr(impl, case.fn)(given_tensors, *rest)
        assert_no_shared_memory(got, *given_tensors, what=case.text())
        assert_ordinary(lambda got=got: got, case.expected, what=f"{case.text()} vs torch.{case.fn}")


# ------------------------------------------------------------------ split and chunk

@pytest.mark.weight(3)
@example(Cut("split", torch.arange(5), 2, 0, spelled=False))  # the spec's example
@example(Cut("split", torch.arange(10).reshape(5, 2), 7, 0))  # one piece: x whole
@example(Cut("split", torch.empty(0, 2), 3, 0))  # one empty piece
@example(Cut("split", torch.empty(3, 0), 0, -1))  # size 0 cuts a dim of size 0
@settings(max_examples=30)
@given(split_size_cases())
def test_split_by_size_matches_torch(impl, case):
    check_cut(impl, case, "pieces of that size, the last one shorter; torch.split gives the expected")


@pytest.mark.weight(2)
@example(Cut("split", torch.arange(5), [4, 0, 1], 0, spelled=False))  # the spec's example
@example(Cut("split", torch.arange(12).reshape(6, 2), [4, 1, 1], 0))  # the notes' example
@settings(max_examples=25)
@given(split_sections_cases())
def test_split_by_sections_matches_torch(impl, case):
    check_cut(impl, case, "pieces of the listed sizes; torch.split gives the expected")


@pytest.mark.weight(3)
@example(Cut("chunk", torch.arange(5), 4, 0, spelled=False))  # the spec's examples: 2, 2, 1
@example(Cut("chunk", torch.arange(6), 4, 0))  # 2, 2, 2: three pieces for four chunks
@example(Cut("chunk", torch.arange(11), 6, 0))
@example(Cut("chunk", torch.empty(2, 0), 3, 1))  # three empty pieces
@settings(max_examples=30)
@given(chunk_cases())
def test_chunk_matches_torch(impl, case):
    n = case.x.shape[case.dim]
    size = -(-n // case.how) if n else 0
    check_cut(impl, case, f"pieces of ceil({n} / {case.how}) = {size}, maybe fewer than {case.how}; "
                          "torch.chunk gives the expected")


@pytest.mark.weight(2)
@example(Cut("split", relaid(torch.arange(12).reshape(3, 4), "permuted"), 2, 1))
@example(Cut("chunk", relaid(torch.arange(12).reshape(3, 4), "sliced"), 2, 0))
@settings(max_examples=20)
@given(st.one_of(split_size_cases(), split_sections_cases(), chunk_cases()))
def test_pieces_are_views_of_x(impl, case):
    args = case.args()
    got = pieces(getattr(impl, case.fn)(*args), case.text())
    expected = case.expected(args[0])
    check_views(got, args[0], expected, case.text())
    assert_ordinary(lambda: got, lambda: case.expected(), what=f"{case.text()} vs torch.{case.fn}")


@st.composite
def bad_split_cases(draw) -> tuple[Cut, Cut, type, str]:
    """A valid split case, and one made wrong in one way."""
    case = draw(st.one_of(split_size_cases(), split_sections_cases()))
    n = case.x.shape[case.dim]
    kinds = ["0-d x", "negative size", "sections too many", "dim out of range"]
    kinds += ["size 0"] if n else []
    kinds += ["negative section"] if n else []
    how = draw(sampled(tuple(kinds)), label="how it is wrong")
    if how == "0-d x":
        return case, case._replace(x=values((), case.x.dtype), dim=0), ValueError, "x is 0-d"
    if how == "negative size":
        size = -draw(st.integers(1, 2), label="negative size")
        return case, case._replace(how=size), ValueError, f"split_size {size} is negative"
    if how == "size 0":
        return case, case._replace(how=0), ValueError, f"split_size 0 for a dim of size {n}"
    if how == "sections too many":
        parts = [*draw(sections(n)), draw(st.integers(1, 2), label="extra")]
        return case, case._replace(how=parts), ValueError, f"sections {parts} add up to {sum(parts)}, not {n}"
    if how == "negative section":
        parts = [n + 1, -1]
        return case, case._replace(how=parts), ValueError, f"sections {parts} have a negative size"
    ndim = case.x.dim()
    far = draw(sampled((ndim, ndim + 1, -ndim - 1)), label="dim out of range")
    return case, case._replace(dim=far), IndexError, f"dim={far} for a {ndim}-d x"


@settings(max_examples=20)
@given(bad_split_cases())
def test_split_errors(impl, case):
    ordinary, bad, error, why = case
    with ordinary_cut(impl, ordinary, "beside the error case"):
        with expect_raises(error, when=f"split: {why}"):
            impl.split(*bad._replace(spelled=True).args())


@st.composite
def bad_chunk_cases(draw) -> tuple[Cut, Cut, type, str]:
    case = draw(chunk_cases())
    how = draw(sampled(("chunks < 1", "0-d x", "dim out of range")), label="how it is wrong")
    if how == "chunks < 1":
        chunks = draw(st.integers(-2, 0), label="chunks")
        return case, case._replace(how=chunks), ValueError, f"chunks={chunks} is below 1"
    if how == "0-d x":
        return case, case._replace(x=values((), case.x.dtype), dim=0), ValueError, "x is 0-d"
    ndim = case.x.dim()
    far = draw(sampled((ndim, ndim + 1, -ndim - 1)), label="dim out of range")
    return case, case._replace(dim=far), IndexError, f"dim={far} for a {ndim}-d x"


@settings(max_examples=15)
@given(bad_chunk_cases())
def test_chunk_errors(impl, case):
    ordinary, bad, error, why = case
    with ordinary_cut(impl, ordinary, "beside the error case"):
        with expect_raises(error, when=f"chunk: {why}"):
            impl.chunk(*bad._replace(spelled=True).args())


@settings(max_examples=10)
@given(split_size_cases(), chunk_cases())
def test_pieces_come_in_a_tuple(impl, split_case, chunk_case):
    with ordinary_cut(impl, split_case, "beside the type"), ordinary_cut(impl, chunk_case, "beside the type"):
        for case in (split_case, chunk_case):
            got = getattr(impl, case.fn)(*case.args())
            assert isinstance(got, tuple), (f"{case.text()} returned a {type(got).__name__}; expected a "
                                            "tuple of tensors, as torch returns")
