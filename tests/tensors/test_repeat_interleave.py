"""repeat_interleave from cumulative counts and an index, equal to torch.repeat_interleave."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.contract.expect import assert_same, expect_raises
from tests.strategies import float_tensors, int_tensors, shapes

_BY_INDEX = ("cumsum the counts, find each output position's source slice with "
             "torch.searchsorted(ends, positions, right=True), then index_select along dim")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.repeat_interleave": _BY_INDEX,
    "Tensor.repeat_interleave": _BY_INDEX,
})

VALUE_DTYPES = [torch.float64, torch.float32, torch.int64, torch.bool]


class Case(NamedTuple):
    x: torch.Tensor
    repeats: int | torch.Tensor
    dim: int | None

    def args(self) -> tuple[Any, ...]:
        repeats = self.repeats.clone() if isinstance(self.repeats, torch.Tensor) else self.repeats
        return self.x.clone(), repeats, self.dim

    def text(self) -> str:
        r = self.repeats.tolist() if isinstance(self.repeats, torch.Tensor) else self.repeats
        kind = "tensor " if isinstance(self.repeats, torch.Tensor) else ""
        return (f"repeat_interleave(x of shape {tuple(self.x.shape)}, repeats={kind}{r}, "
                f"dim={self.dim})")

    def expected(self) -> torch.Tensor:
        return torch.repeat_interleave(self.x, self.repeats, dim=self.dim)


@st.composite
def values(draw, shape: tuple[int, ...]) -> torch.Tensor:
    dtype = draw(st.sampled_from(VALUE_DTYPES), label="dtype")
    if dtype.is_floating_point:
        return draw(float_tensors(shape, dtype=dtype, low=-9, high=9), label="x")
    if dtype == torch.bool:
        return draw(int_tensors(shape, 0, 1, dtype=torch.bool), label="x")
    return draw(int_tensors(shape, -9, 9, dtype=dtype), label="x")


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
    return Case(x, counts, dim)


# ------------------------------------------------------------------ values

@pytest.mark.weight(3)
@example(Case(torch.tensor([[1, 2], [3, 4]]), 2, None))
@example(Case(torch.tensor([[1, 2], [3, 4]]), 2, 1))
@settings(max_examples=60)
@given(cases("int"))
def test_int_repeats_match_torch(impl, case):
    assert_same(impl.repeat_interleave(*case.args()), case.expected(),
                what=f"{case.text()} (torch.repeat_interleave gives the expected)")


@pytest.mark.weight(3)
@example(Case(torch.tensor([[1, 2], [3, 4]]), torch.tensor([1, 2]), 0))
@example(Case(torch.tensor([5, 6, 7]), torch.tensor([2, 0, 1]), 0))
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
    x, repeats, dim = case.args()
    impl.repeat_interleave(x, repeats, dim)
    assert_same(x, case.x, what="x after the call (it must be left unchanged)")
    assert_same(repeats, case.repeats, what="repeats after the call (it must be left unchanged)")


# ------------------------------------------------------------------ errors

@settings(max_examples=25)
@given(cases("tensor", min_dims=1).filter(lambda c: c.repeats.numel() > 0), st.integers(-3, -1),
       st.booleans(), st.data())
def test_negative_count_raises_value_error(impl, case, negative, as_int, data):
    if as_int:
        case = case._replace(repeats=negative)
    else:
        repeats = case.repeats.clone()
        repeats[data.draw(st.integers(0, repeats.numel() - 1), label="count made negative")] = negative
        case = case._replace(repeats=repeats)
    with expect_raises(ValueError, when=f"a count is negative: {case.text()}"):
        impl.repeat_interleave(*case.args())


@settings(max_examples=25)
@given(cases("tensor"), st.integers(1, 2), st.booleans())
def test_wrong_number_of_counts_raises_value_error(impl, case, more, shorter):
    n = case.repeats.numel()
    length = n - more if shorter and n - more >= 2 else n + more
    if length == 1:
        length = n + 2 if n + 2 != 1 else 2
    case = case._replace(repeats=torch.ones(length, dtype=torch.int64))
    with expect_raises(ValueError, when=f"repeats has {length} counts for {n} slices: "
                                        f"{case.text()}"):
        impl.repeat_interleave(*case.args())


@settings(max_examples=20)
@given(cases("int", min_dims=1), st.integers(0, 2), st.booleans())
def test_dim_out_of_range_raises_index_error(impl, case, beyond, negative):
    ndim = case.x.dim()
    case = case._replace(dim=-ndim - 1 - beyond if negative else ndim + beyond)
    with expect_raises(IndexError, when=f"dim={case.dim} for a {ndim}-d x: {case.text()}"):
        impl.repeat_interleave(*case.args())


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
