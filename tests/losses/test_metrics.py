"""IoU of boolean masks, Pearson correlation and mean absolute error, with their degenerate cases defined."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.properties import anchored
from tests.strategies import any_layout, float_tensors, int_tensors, mismatched_shapes, reusable, sampled, shapes

pytestmark = pytest.mark.exercise(points=10)

FLOATS = (torch.float64, torch.float32)
NEAR = {torch.float64: {}, torch.float32: dict(rtol=1e-5, atol=1e-5)}
# float16 / bfloat16 on the CPU against float64 from the same rounded values: the worst
# errors measured with the reference over 300 cases were 7e-4 / 7e-3 (pearson) and
# 4e-4 / 4e-3 relative (mae).
HALF = [torch.float16, torch.bfloat16]
HALF_PEARSON = {torch.float16: dict(rtol=0, atol=5e-3), torch.bfloat16: dict(rtol=0, atol=3e-2)}
HALF_MAE = {torch.float16: dict(rtol=5e-3, atol=1e-3), torch.bfloat16: dict(rtol=2e-2, atol=1e-2)}


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


@st.composite
def overlapping_mask_pairs(draw) -> tuple[torch.Tensor, torch.Tensor]:
    """Two bool masks of one shape (1-3 dims, at least two elements) that overlap in part,
    0 < iou < 1: an ordinary input no constant answer (0, 1, "1 if equal") gets right."""
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4).filter(
        lambda s: math.prod(s) >= 2), label="shape")
    pred = draw(int_tensors(shape, 0, 1), label="pred").bool()
    target = draw(int_tensors(shape, 0, 1), label="target").bool()
    pred.view(-1)[:2] = True  # both hold position 0; only pred holds position 1
    target.view(-1)[0], target.view(-1)[1] = True, False
    return pred, target


@st.composite
def differing_pairs(draw, dtypes=FLOATS) -> tuple[torch.Tensor, torch.Tensor]:
    """Two float tensors of one shape (0-3 dims, no side 0) that differ somewhere."""
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), label="shape")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    x, y = draw(float_tensors(shape, dtype), label="x"), draw(float_tensors(shape, dtype), label="y")
    if torch.equal(x, y):
        y.view(-1)[0] += 1
    return x, y


def set_iou(pred: torch.Tensor, target: torch.Tensor) -> float:
    """IoU from the sets of True positions (an oracle independent of tensor arithmetic)."""
    a = {tuple(i) for i in pred.nonzero().tolist()}
    b = {tuple(i) for i in target.nonzero().tolist()}
    return len(a & b) / len(a | b) if a | b else 1.0


def scalar_like(value: float, dtype: torch.dtype) -> torch.Tensor:
    return torch.tensor(value, dtype=dtype)


def corrcoef(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """torch.corrcoef's r of the flattened samples, in float64."""
    return torch.corrcoef(torch.stack([x.reshape(-1).double(), y.reshape(-1).double()]))[0, 1]


# Each of these rides along with a corner, error or consistency check: the same function on
# an ordinary input, against its oracle.

def iou_on_ordinary_masks(impl, masks):
    pred, target = masks
    return anchored(lambda: impl.iou(pred.clone(), target.clone()),
                    lambda: scalar_like(set_iou(pred, target), torch.float32),
                    what=f"iou of two partly overlapping masks of shape {tuple(pred.shape)} "
                         "(an ordinary input, checked beside the corner case)")


def pearson_on_ordinary_samples(impl, samples):
    x, y = samples
    return anchored(lambda: impl.pearson(x.clone(), y.clone()),
                    lambda: corrcoef(x, y).to(x.dtype), **NEAR[x.dtype],
                    what=f"pearson of {x.numel()} varying {x.dtype} samples vs torch.corrcoef "
                         "(an ordinary input, checked beside the corner case)")


def mae_on_ordinary_pair(impl, pair):
    x, y = pair
    return anchored(lambda: impl.mae(x.clone(), y.clone()), lambda: F.l1_loss(x, y),
                    what=f"mae of two {x.dtype} tensors of shape {tuple(x.shape)} vs F.l1_loss "
                         "(an ordinary input, checked beside the error case)")


# ------------------------------------------------------------------ iou

@pytest.mark.weight(3)
@settings(max_examples=60)
@given(mask_pairs(), st.data())
def test_iou_matches_set_counts(impl, masks, data):
    """Masks in any memory layout (transposed, or strided views of a storage full of True)."""
    pred, target = masks
    expected = scalar_like(set_iou(pred, target), torch.float32)
    got = impl.iou(data.draw(any_layout(pred, label="pred")),
                   data.draw(any_layout(target, label="target")))
    assert_same(got, expected,
                what=f"iou of masks of shape {tuple(pred.shape)} (|A & B| / |A | B|, 0-d float32)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), overlapping_mask_pairs())
def test_iou_of_an_empty_union_is_one(impl, shape, ordinary):
    empty = torch.zeros(shape, dtype=torch.bool)
    with iou_on_ordinary_masks(impl, ordinary):
        assert_same(impl.iou(empty.clone(), empty.clone()), scalar_like(1.0, torch.float32),
                    what=f"iou of two all-False masks of shape {tuple(shape)} (empty union: 1.0, "
                         "not nan)")


@settings(max_examples=30)
@given(mask_pairs(min_side=1), overlapping_mask_pairs())
def test_iou_is_symmetric_one_on_itself_zero_when_disjoint(impl, masks, ordinary):
    pred, target = masks
    with iou_on_ordinary_masks(impl, ordinary):
        same = impl.iou(pred.clone(), target.clone())
        swapped = impl.iou(target.clone(), pred.clone())
        assert_same(swapped, same, what="iou(target, pred) vs iou(pred, target) (IoU is symmetric)")
        assert_same(impl.iou(pred.clone(), pred.clone()), scalar_like(1.0, torch.float32),
                    what="iou(pred, pred) (a mask agrees perfectly with itself)")
        if pred.any():
            assert_same(impl.iou(pred.clone(), ~pred), scalar_like(0.0, torch.float32),
                        what="iou(pred, ~pred) (disjoint masks share nothing)")


@settings(max_examples=30)
@given(overlapping_mask_pairs(), st.sampled_from(["int mask", "float mask", "other shape"]),
       st.data())
def test_iou_rejects_non_bool_or_mismatched_masks(impl, masks, how, data):
    """Shapes that differ in any dim, including ones that broadcast or hold as many elements."""
    pred, target = masks
    bad_pred, bad_target = pred, target
    if how == "int mask":
        bad_target = target.long()
    elif how == "float mask":
        bad_pred = pred.float()
    else:
        shape = data.draw(mismatched_shapes(tuple(target.shape), label="target's shape"))
        bad_target = data.draw(int_tensors(shape, 0, 1), label="target").bool()
    with iou_on_ordinary_masks(impl, masks):
        with expect_raises(ValueError, when=f"the masks are {bad_pred.dtype} "
                                            f"{tuple(bad_pred.shape)} and {bad_target.dtype} "
                                            f"{tuple(bad_target.shape)}"):
            impl.iou(bad_pred.clone(), bad_target.clone())


# ------------------------------------------------------------------ pearson

@pytest.mark.weight(3)
@settings(max_examples=50)
@given(sample_pairs(), st.data())
def test_pearson_matches_torch_corrcoef(impl, samples, data):
    """Samples in any memory layout: a (rows, cols) x may be transposed or a strided view."""
    x, y = samples
    got = impl.pearson(data.draw(any_layout(x, label="x")), data.draw(any_layout(y, label="y")))
    assert_same(got, corrcoef(x, y).to(x.dtype), **NEAR[x.dtype],
                what=f"pearson of {x.numel()} {x.dtype} samples of shape {tuple(x.shape)} "
                     "(vs torch.corrcoef)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(sample_pairs(dtypes=[torch.float64]), st.sampled_from([1e6, 1e7, 1e8]),
       st.sampled_from([1.0, -1.0]), st.sampled_from([1.0, -1.0]))
def test_pearson_of_samples_far_from_zero(impl, samples, offset, sign_x, sign_y):
    """A large common offset (1e6 to 1e8) and a small spread, in float64: the one-pass
    formulas n * sum(xy) - sum(x) * sum(y) and E[xy] - E[x] E[y] lose every digit to
    cancellation; centring first (x - x.mean()) keeps them."""
    x, y = samples
    far_x, far_y = x + sign_x * offset, y + sign_y * offset
    assert_same(impl.pearson(far_x.clone(), far_y.clone()), corrcoef(x, y),
                what=f"pearson of {x.numel()} samples around {sign_x * offset:g} and "
                     f"{sign_y * offset:g} (vs torch.corrcoef of the same spread around 0: "
                     "centre before multiplying)")


@pytest.mark.weight(2)
@settings(max_examples=40)
@given(st.integers(1, 6), st.sampled_from(FLOATS), st.sampled_from(["x", "y", "both"]),
       st.floats(-10, 10, allow_nan=False), st.data())
def test_pearson_of_a_constant_is_exactly_zero(impl, n, dtype, which, value, data):
    varying = data.draw(float_tensors((n,), dtype=dtype), label="the other samples")
    constant = torch.full((n,), value, dtype=dtype)
    x = constant if which in ("x", "both") else varying
    y = constant if which in ("y", "both") else varying
    with pearson_on_ordinary_samples(impl, data.draw(sample_pairs(dtypes=[dtype]), label="ordinary")):
        assert_same(impl.pearson(x.clone(), y.clone()), scalar_like(0.0, dtype), rtol=0, atol=0,
                    what=f"pearson when {which} is constant ({value!r} repeated {n} times): zero "
                         "variance, exactly 0 (test it with max == min, not with the variance)")


LINES = ((1.0, 0.0), (-1.0, 0.0), (3.0, 1.0), (-2.0, 0.25), (0.5, -2.0), (-0.5, 7.5))


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(sample_pairs(), st.data())
def test_pearson_of_a_line_stays_within_minus_one_and_one(impl, samples, data):
    """y = a * x + b exactly (quarters, so no rounding in y): r is +1 or -1, and the
    rounding of sum(xc * yc) / (|xc| * |yc|) lands just past it about one time in four;
    the spec's r lies in [-1, 1], so clamp it."""
    x, _ = samples
    with pearson_on_ordinary_samples(impl, data.draw(sample_pairs(dtypes=[x.dtype]), label="ordinary")):
        for a, b in LINES:
            y = x * a + b
            got = impl.pearson(x.clone(), y.clone())
            sign = 1.0 if a > 0 else -1.0
            what = (f"pearson(x, {a:g} * x + {b:g}) of {x.numel()} {x.dtype} samples "
                    f"(a line: r = {sign:+g}, and never beyond [-1, 1])")
            assert_same(got, scalar_like(sign, x.dtype), **NEAR[x.dtype], what=what)
            assert -1.0 <= float(got) <= 1.0, (
                f"pearson(x, {a:g} * x + {b:g}) returned {float(got)!r}, outside [-1, 1]: "
                "rounding can carry r just past +-1, clamp it")


@settings(max_examples=30)
@given(sample_pairs(), st.sampled_from(["empty", "other shape"]), st.data())
def test_pearson_rejects_empty_or_mismatched_samples(impl, samples, how, data):
    """Shapes that differ in any dim, including ones that broadcast or hold as many elements."""
    x, y = samples
    if how == "empty":
        bad_x, bad_y = x[:0], y[:0]
    else:
        shape = data.draw(mismatched_shapes(tuple(y.shape), label="y's shape"))
        bad_x, bad_y = x, data.draw(float_tensors(shape, dtype=y.dtype), label="y")
    with pearson_on_ordinary_samples(impl, samples):
        with expect_raises(ValueError, when=f"x has shape {tuple(bad_x.shape)} and y "
                                            f"{tuple(bad_y.shape)}"):
            impl.pearson(bad_x.clone(), bad_y.clone())


# ------------------------------------------------------------------ mae

@reusable
def same_shape_pairs(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[torch.Tensor, torch.Tensor]]:
    """Two float tensors of ``shape`` and one dtype from FLOATS."""
    return sampled(FLOATS).flatmap(functools.partial(_pair_of, shape))


@reusable
def _pair_of(shape: tuple[int, ...], dtype: torch.dtype) -> st.SearchStrategy[tuple[torch.Tensor, torch.Tensor]]:
    return st.tuples(float_tensors(shape, dtype), float_tensors(shape, dtype))


@pytest.mark.weight(2)
@settings(max_examples=40)
@given(shapes(min_dims=0, max_dims=3, min_side=1, max_side=4).flatmap(same_shape_pairs), st.data())
def test_mae_matches_f_l1_loss(impl, pair, data):
    """Inputs in any memory layout (transposed, or strided views of a NaN-filled storage)."""
    x, y = pair
    got = impl.mae(data.draw(any_layout(x, label="x")), data.draw(any_layout(y, label="y")))
    assert_same(got, F.l1_loss(x, y),
                what=f"mae of {x.dtype} tensors of shape {tuple(x.shape)} (vs F.l1_loss)")


@pytest.mark.weight(2)
@settings(max_examples=40)
@given(differing_pairs(), st.sampled_from(["(N, 1) vs (N,)", "(N,) vs (1, N)", "other shape",
                                           "empty"]), st.integers(1, 5), st.data())
def test_mae_rejects_mismatched_or_empty_inputs(impl, pair, how, n, data):
    """Shapes that differ in any dim, including ones that broadcast or hold as many elements."""
    pred = data.draw(float_tensors((n,)), label="predictions")
    target = data.draw(float_tensors((n,)), label="targets")
    if how == "(N, 1) vs (N,)":
        pred = pred.unsqueeze(1)
    elif how == "(N,) vs (1, N)":
        target = target.unsqueeze(0)
    elif how == "other shape":
        pred = pair[0]
        shape = data.draw(mismatched_shapes(tuple(pred.shape), label="target's shape"))
        target = data.draw(float_tensors(shape, dtype=pred.dtype), label="target")
    else:
        pred, target = pred[:0], target[:0]
    with mae_on_ordinary_pair(impl, pair):
        with expect_raises(ValueError, when=f"the shapes are {tuple(pred.shape)} and "
                                            f"{tuple(target.shape)} ({how})"):
            impl.mae(pred, target)


# ------------------------------------------------------------------ reduced precision on the CPU

@pytest.mark.weight(2)
@settings(max_examples=20)
@given(sample_pairs(dtypes=HALF), st.sampled_from(["pearson", "mae"]))
def test_float16_and_bfloat16_keep_their_dtype(impl, samples, which):
    """pearson and mae of float16 / bfloat16 samples on the CPU: a 0-d result in that dtype,
    close to float64 from the same values."""
    x, y = samples
    if which == "pearson":
        got, expected, tol = impl.pearson(x.clone(), y.clone()), corrcoef(x, y), HALF_PEARSON
    else:
        got, expected, tol = impl.mae(x.clone(), y.clone()), F.l1_loss(x.double(), y.double()), HALF_MAE
    assert isinstance(got, torch.Tensor) and got.dtype == x.dtype and got.dim() == 0, (
        f"{which} of {x.dtype} samples returned "
        f"{got.dtype if isinstance(got, torch.Tensor) else type(got).__name__}"
        f"{' of shape ' + str(tuple(got.shape)) if isinstance(got, torch.Tensor) else ''}; "
        f"expected a 0-d {x.dtype} tensor (the inputs' dtype)")
    assert_same(got.double(), expected, **tol[x.dtype],
                what=f"{which} of {x.numel()} {x.dtype} samples (vs float64 of the same values)")


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
