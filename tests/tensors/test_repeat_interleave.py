"""repeat_interleave from cumulative counts and an index, equal to torch.repeat_interleave."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_arguments_unchanged, assert_no_shared_memory, assert_ordinary
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, int_tensors, relaid, shapes

_BY_INDEX = ("cumsum the counts, find each output position's source slice with "
             "torch.searchsorted(ends, positions, right=True), then index_select along dim")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.repeat_interleave": _BY_INDEX,
    "Tensor.repeat_interleave": _BY_INDEX,
})

# float16 and bfloat16 run on the CPU too: values are only copied, so they stay exact
VALUE_DTYPES = [torch.float64, torch.float32, torch.int64, torch.bool, torch.float16,
                torch.bfloat16]
# x and repeats are only read: any layout, stride-0 expanded views included
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")


class Case(NamedTuple):
    x: torch.Tensor
    repeats: int | torch.Tensor
    dim: int | None
    # Whether a call spells out dim=None or leaves it out (the default, so exercised).
    spelled: bool = True

    def args(self) -> tuple[Any, ...]:
        """Fresh copies, each in the memory layout drawn for it; no dim where it is None
        and the default is left out."""
        repeats = copy_in_layout(self.repeats) if isinstance(self.repeats, torch.Tensor) else self.repeats
        if self.dim is None and not self.spelled:
            return copy_in_layout(self.x), repeats
        return copy_in_layout(self.x), repeats, self.dim

    def text(self) -> str:
        r = self.repeats.tolist() if isinstance(self.repeats, torch.Tensor) else self.repeats
        kind = "tensor " if isinstance(self.repeats, torch.Tensor) else ""
        dim = "" if self.dim is None and not self.spelled else f", dim={self.dim}"
        return f"repeat_interleave(x of shape {tuple(self.x.shape)}, repeats={kind}{r}{dim})"

    def expected(self) -> torch.Tensor:
        return torch.repeat_interleave(self.x, self.repeats, dim=self.dim)


@st.composite
def values(draw, shape: tuple[int, ...]) -> torch.Tensor:
    """x of ``shape`` in any memory layout (transposed, sliced out of a larger storage,
    expanded with stride 0)."""
    dtype = draw(st.sampled_from(VALUE_DTYPES), label="dtype")
    if dtype.is_floating_point:
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        x = draw(float_tensors(shape, dtype=wide, low=-9, high=9), label="x").to(dtype)
    elif dtype == torch.bool:
        x = draw(int_tensors(shape, 0, 1, dtype=torch.bool), label="x")
    else:
        x = draw(int_tensors(shape, -9, 9, dtype=dtype), label="x")
    return draw(any_layout(x, READ_ONLY_LAYOUTS, label="x"))


@st.composite
def cases(draw, repeats: str, min_dims: int = 0) -> Case:
    """``repeats`` is "int", "tensor" (one count per slice) or "one" (a 1-element tensor)."""
    shape = draw(shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=4), label="shape")
    dim = draw(st.sampled_from([None, *range(-len(shape), len(shape))]), label="dim")
    x = draw(values(shape))
    slices = x.numel() if dim is None else shape[dim]
    if repeats == "int":
        counts: int | torch.Tensor = draw(st.integers(0, 3), label="repeats")
    else:
        counts = draw(int_tensors((slices if repeats == "tensor" else 1,), 0, 3), label="repeats")
        counts = draw(any_layout(counts, VALUE_LAYOUTS, label="repeats"))
    return Case(x, counts, dim, spelled=draw(st.booleans(), label="dim=None spelled out"))


def ordinary(impl, case: Case, why: str):
    """An anchor: repeat_interleave of a valid case equals torch.repeat_interleave."""
    return anchored(lambda: impl.repeat_interleave(*case.args()), case.expected,
                    what=f"{case.text()} vs torch.repeat_interleave ({why})")


# ------------------------------------------------------------------ values

@pytest.mark.weight(3)
@example(Case(torch.tensor([[1, 2], [3, 4]]), 2, None, spelled=False))  # the spec's example
@example(Case(torch.tensor([[1, 2], [3, 4]]), 2, 1))
@example(Case(relaid(torch.arange(6).reshape(2, 3), "permuted"), 2, None))  # a transposed x
@settings(max_examples=60)
@given(cases("int"))
def test_int_repeats_match_torch(impl, case):
    assert_same(impl.repeat_interleave(*case.args()), case.expected(),
                what=f"{case.text()} (torch.repeat_interleave gives the expected)")


@pytest.mark.weight(3)
@example(Case(torch.tensor([[1, 2], [3, 4]]), torch.tensor([1, 2]), 0))
@example(Case(torch.tensor([5, 6, 7]), torch.tensor([2, 0, 1]), 0))
@example(Case(relaid(torch.arange(12.).reshape(3, 4), "sliced"), torch.tensor([0, 1, 2] * 4), None))
@settings(max_examples=60)
@given(cases("tensor"))
def test_tensor_repeats_match_torch(impl, case):
    assert_same(impl.repeat_interleave(*case.args()), case.expected(),
                what=f"{case.text()} (torch.repeat_interleave gives the expected)")


@settings(max_examples=30)
@given(cases("one"))
def test_one_count_tensor_repeats_every_slice(impl, case):
    assert_same(impl.repeat_interleave(*case.args()), case.expected(),
                what=f"{case.text()} (a 1-element repeats tensor applies to every slice)")


@settings(max_examples=20)
@given(cases("tensor"))
def test_inputs_unchanged(impl, case):
    x, repeats, *dim = case.args()
    got = impl.repeat_interleave(x, repeats, *dim)
    assert_arguments_unchanged(impl, what="x and repeats after the call")
    assert_same(x, case.x, what="x after the call (it must be left unchanged)")
    assert_same(repeats, case.repeats, what="repeats after the call (it must be left unchanged)")
    assert_ordinary(lambda: got, case.expected, what=f"{case.text()} (torch.repeat_interleave gives the expected)")


@settings(max_examples=25)
@example(Case(torch.tensor([[1, 2], [3, 4]]), 1, 0), False)
@example(Case(torch.tensor([5, 6, 7]), torch.tensor([1, 1, 1]), None), False)
@given(st.one_of(cases("int"), cases("tensor")), st.booleans())
def test_result_shares_no_memory_with_x(impl, case, all_ones):
    """A new tensor, even when every count is 1 and the result equals x."""
    if all_ones:
        case = case._replace(repeats=1 if isinstance(case.repeats, int)
                             else torch.ones_like(case.repeats))
    x, repeats, *dim = case.args()
    got = impl.repeat_interleave(x, repeats, *dim)
    assert_no_shared_memory(got, x, repeats, what=case.text())
    assert_ordinary(lambda: got, case.expected, what=f"{case.text()} (torch.repeat_interleave gives the expected)")


# ------------------------------------------------------------------ errors

@settings(max_examples=25)
@given(cases("tensor", min_dims=1).filter(lambda c: c.repeats.numel() > 0), st.integers(-3, -1),
       st.booleans(), st.data())
def test_negative_count_raises_value_error(impl, case, negative, as_int, data):
    if as_int:
        bad = case._replace(repeats=negative)
    else:
        repeats = case.repeats.clone()
        repeats[data.draw(st.integers(0, repeats.numel() - 1), label="count made negative")] = negative
        bad = case._replace(repeats=repeats)
    with ordinary(impl, case, "the counts before one was made negative"):
        with expect_raises(ValueError, when=f"a count is negative: {bad.text()}"):
            impl.repeat_interleave(*bad.args())


@settings(max_examples=25)
@given(cases("tensor"), st.integers(1, 2), st.booleans())
def test_wrong_number_of_counts_raises_value_error(impl, case, more, shorter):
    n = case.repeats.numel()
    length = n - more if shorter and n - more >= 2 else n + more
    if length == 1:
        length = n + 2 if n + 2 != 1 else 2
    bad = case._replace(repeats=torch.ones(length, dtype=torch.int64))
    with ordinary(impl, case, "the same x with one count per slice"):
        with expect_raises(ValueError, when=f"repeats has {length} counts for {n} slices: "
                                            f"{bad.text()}"):
            impl.repeat_interleave(*bad.args())


@settings(max_examples=20)
@given(cases("int", min_dims=1), st.integers(0, 2), st.booleans())
def test_dim_out_of_range_raises_index_error(impl, case, beyond, negative):
    ndim = case.x.dim()
    bad = case._replace(dim=-ndim - 1 - beyond if negative else ndim + beyond)
    with ordinary(impl, case, "the same case with a valid dim"):
        with expect_raises(IndexError, when=f"dim={bad.dim} for a {ndim}-d x: {bad.text()}"):
            impl.repeat_interleave(*bad.args())


# ------------------------------------------------------------------ GPU

def check_on_device(impl, case: Case, device: str) -> None:
    """x and a repeats tensor on ``device``: the result stays there and equals torch on the CPU."""
    repeats = case.repeats.to(device) if isinstance(case.repeats, torch.Tensor) else case.repeats
    got = impl.repeat_interleave(case.x.to(device), repeats, case.dim)
    assert isinstance(got, torch.Tensor) and got.device.type == device, (
        f"{case.text()} with x on {device} returned "
        f"{got.device if isinstance(got, torch.Tensor) else got!r}; the result must stay on "
        f"{device} (create positions and indices on x.device)")
    assert_same(got.cpu(), case.expected(), what=f"{case.text()} on {device}")


@pytest.mark.cuda
@settings(max_examples=30)
@given(st.one_of(cases("tensor"), cases("int")))
def test_on_gpu_result_stays_on_the_device(impl, case):
    check_on_device(impl, case, "cuda")
