"""IoU of boolean masks, Pearson correlation and mean absolute error, with their degenerate cases defined."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.contract.expect import assert_same, expect_raises
from tests.strategies import float_tensors, int_tensors, shapes

pytestmark = pytest.mark.exercise(points=10)

FLOATS = [torch.float64, torch.float32]
NEAR = {torch.float64: {}, torch.float32: dict(rtol=1e-5, atol=1e-5)}


# ------------------------------------------------------------------ strategies

@st.composite
def mask_pairs(draw, min_side: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Two bool masks of one shape (0-3 dims, sides may be 0)."""
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=4), label="shape")
    pred = draw(int_tensors(shape, 0, 1), label="pred").bool()
    target = draw(int_tensors(shape, 0, 1), label="target").bool()
    return pred, target


@st.composite
def sample_pairs(draw, dtypes=FLOATS) -> tuple[torch.Tensor, torch.Tensor]:
    """Paired samples (1-2 dims, at least two elements) in quarters of [-10, 10]: well
    conditioned, and neither x nor y constant."""
    shape = draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=5).filter(
        lambda s: math.prod(s) >= 2), label="shape")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    x, y = (draw(int_tensors(shape, -40, 40), label=name).to(dtype) / 4 for name in ("x", "y"))
    for t in (x, y):
        if t.max() == t.min():
            t.view(-1)[0] += 0.5
    return x, y


def set_iou(pred: torch.Tensor, target: torch.Tensor) -> float:
    """IoU from the sets of True positions (an oracle independent of tensor arithmetic)."""
    a = {tuple(i) for i in pred.nonzero().tolist()}
    b = {tuple(i) for i in target.nonzero().tolist()}
    return len(a & b) / len(a | b) if a | b else 1.0


def scalar_like(value: float, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(value, dtype=dtype)


# ------------------------------------------------------------------ iou

@pytest.mark.weight(3)
@settings(max_examples=60)
@given(mask_pairs())
def test_iou_matches_set_counts(impl, masks):
    pred, target = masks
    expected = scalar_like(set_iou(pred, target), torch.float32)
    assert_same(impl.iou(pred.clone(), target.clone()), expected,
                what=f"iou of masks of shape {tuple(pred.shape)} (|A & B| / |A | B|, 0-d float32)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
def test_iou_of_an_empty_union_is_one(impl, shape):
    empty = torch.zeros(shape, dtype=torch.bool)
    assert_same(impl.iou(empty.clone(), empty.clone()), scalar_like(1.0, torch.float32),
                what=f"iou of two all-False masks of shape {tuple(shape)} (empty union: 1.0, not nan)")


@settings(max_examples=30)
@given(mask_pairs(min_side=1))
def test_iou_is_symmetric_one_on_itself_zero_when_disjoint(impl, masks):
    pred, target = masks
    same = impl.iou(pred.clone(), target.clone())
    swapped = impl.iou(target.clone(), pred.clone())
    assert_same(swapped, same, what="iou(target, pred) vs iou(pred, target) (IoU is symmetric)")
    assert_same(impl.iou(pred.clone(), pred.clone()), scalar_like(1.0, torch.float32),
                what="iou(pred, pred) (a mask agrees perfectly with itself)")
    if pred.any():
        assert_same(impl.iou(pred.clone(), ~pred), scalar_like(0.0, torch.float32),
                    what="iou(pred, ~pred) (disjoint masks share nothing)")


@settings(max_examples=30)
@given(mask_pairs(min_side=1), st.sampled_from(["int mask", "float mask", "extra dim", "longer"]))
def test_iou_rejects_non_bool_or_mismatched_masks(impl, masks, how):
    pred, target = masks
    if how == "int mask":
        target = target.long()
    elif how == "float mask":
        pred = pred.float()
    elif how == "extra dim":
        target = target.unsqueeze(0)
    else:
        target = torch.cat([target.reshape(-1), torch.zeros(1, dtype=torch.bool)])
        pred = pred.reshape(-1)
    with expect_raises(ValueError, when=f"the masks are {pred.dtype} {tuple(pred.shape)} and "
                                        f"{target.dtype} {tuple(target.shape)}"):
        impl.iou(pred, target)


# ------------------------------------------------------------------ pearson

@pytest.mark.weight(3)
@settings(max_examples=50)
@given(sample_pairs())
def test_pearson_matches_torch_corrcoef(impl, samples):
    x, y = samples
    expected = torch.corrcoef(torch.stack([x.reshape(-1).double(), y.reshape(-1).double()]))[0, 1]
    assert_same(impl.pearson(x.clone(), y.clone()), expected.to(x.dtype), **NEAR[x.dtype],
                what=f"pearson of {x.numel()} {x.dtype} samples (vs torch.corrcoef)")


@pytest.mark.weight(2)
@settings(max_examples=60)
@given(st.integers(1, 6), st.sampled_from(FLOATS), st.sampled_from(["x", "y", "both"]),
       st.floats(-10, 10, allow_nan=False), st.data())
def test_pearson_of_a_constant_is_exactly_zero(impl, n, dtype, which, value, data):
    varying = data.draw(float_tensors((n,), dtype=dtype), label="the other samples")
    constant = torch.full((n,), value, dtype=dtype)
    x = constant if which in ("x", "both") else varying
    y = constant if which in ("y", "both") else varying
    assert_same(impl.pearson(x.clone(), y.clone()), scalar_like(0.0, dtype), rtol=0, atol=0,
                what=f"pearson when {which} is constant ({value!r} repeated {n} times): zero "
                     "variance, exactly 0 (test it with max == min, not with the variance)")


@settings(max_examples=20)
@given(sample_pairs(), st.sampled_from(["empty", "extra dim", "longer"]))
def test_pearson_rejects_empty_or_mismatched_samples(impl, samples, how):
    x, y = samples
    if how == "empty":
        x, y = x[:0], y[:0]
    elif how == "extra dim":
        y = y.unsqueeze(-1)
    else:
        y = torch.cat([y.reshape(-1), y.reshape(-1)[:1]])
        x = x.reshape(-1)
    with expect_raises(ValueError, when=f"x has shape {tuple(x.shape)} and y {tuple(y.shape)}"):
        impl.pearson(x, y)


# ------------------------------------------------------------------ mae

@pytest.mark.weight(2)
@settings(max_examples=40)
@given(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4).flatmap(
    lambda shape: st.sampled_from(FLOATS).flatmap(
        lambda dtype: st.tuples(float_tensors(shape, dtype), float_tensors(shape, dtype)))))
def test_mae_matches_f_l1_loss(impl, pair):
    x, y = pair
    assert_same(impl.mae(x.clone(), y.clone()), F.l1_loss(x, y),
                what=f"mae of {x.dtype} tensors of shape {tuple(x.shape)} (vs F.l1_loss)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(st.integers(1, 5), st.sampled_from(["(N, 1) vs (N,)", "(N,) vs (1, N)", "longer", "empty"]),
       st.data())
def test_mae_rejects_mismatched_or_empty_inputs(impl, n, how, data):
    pred = data.draw(float_tensors((n,)), label="predictions")
    target = data.draw(float_tensors((n,)), label="targets")
    if how == "(N, 1) vs (N,)":
        pred = pred.unsqueeze(1)
    elif how == "(N,) vs (1, N)":
        target = target.unsqueeze(0)
    elif how == "longer":
        target = torch.cat([target, target[:1]])
    else:
        pred, target = pred[:0], target[:0]
    with expect_raises(ValueError, when=f"the shapes are {tuple(pred.shape)} and "
                                        f"{tuple(target.shape)} ({how})"):
        impl.mae(pred, target)


# ------------------------------------------------------------------ on the GPU

def check_metrics_on_device(iou: Callable, pearson: Callable, mae: Callable,
                            masks, samples, device: str) -> None:
    """Each metric on ``device`` (float32 samples) vs float64 on the CPU, results on
    ``device``; the degenerate answers (empty union, constant input) too."""
    def on_device(got, what: str, dtype: torch.dtype) -> torch.Tensor:
        assert isinstance(got, torch.Tensor), f"{what} returned {type(got).__name__}, not a tensor"
        assert got.dtype == dtype and got.device.type == device, (
            f"{what} returned {got.dtype} on {got.device}; expected {dtype} on {device}, "
            "where the inputs are")
        return got.cpu()

    pred, target = masks
    empty = torch.zeros_like(pred)
    got = on_device(iou(pred.to(device), target.to(device)), "iou", torch.float32)
    assert_same(got, scalar_like(set_iou(pred, target), torch.float32), what=f"iou on {device}")
    got = on_device(iou(empty.to(device), empty.to(device)), "iou of all-False masks", torch.float32)
    assert_same(got, scalar_like(1.0, torch.float32), what=f"iou of an empty union on {device}")

    x, y = (t.float() for t in samples)
    tol = NEAR[torch.float32]
    r = torch.corrcoef(torch.stack([x.reshape(-1).double(), y.reshape(-1).double()]))[0, 1]
    got = on_device(pearson(x.to(device), y.to(device)), "pearson", torch.float32)
    assert_same(got, r.float(), what=f"pearson in float32 on {device}", **tol)
    flat = torch.full_like(x, 0.1)
    got = on_device(pearson(x.to(device), flat.to(device)), "pearson with a constant y", torch.float32)
    assert_same(got, scalar_like(0.0, torch.float32), rtol=0, atol=0,
                what=f"pearson with a constant y on {device} (exactly 0)")

    got = on_device(mae(x.to(device), y.to(device)), "mae", torch.float32)
    assert_same(got, F.l1_loss(x.double(), y.double()).float(), what=f"mae in float32 on {device}", **tol)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=20)
@given(mask_pairs(min_side=1), sample_pairs(dtypes=[torch.float32]))
def test_metrics_on_gpu(impl, masks, samples):
    check_metrics_on_device(impl.iou, impl.pearson, impl.mae, masks, samples, "cuda")
