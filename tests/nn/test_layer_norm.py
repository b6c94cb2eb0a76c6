"""Layer norm by hand (biased variance, eps inside the root, optional affine), equal to F.layer_norm."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.numerics import manual_seed, random_weights
from tests.properties import anchored, harder_than
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, sampled, shapes

_BY_HAND = ("compute mean and the biased variance over the normalised dims (keepdim=True), "
            "then (x - mean) / torch.sqrt(var + eps), times weight, plus bias")

pytestmark = pytest.mark.exercise(points=10, forbid={
    "F.layer_norm": _BY_HAND,
    "torch.layer_norm": _BY_HAND,
    "torch.native_layer_norm": _BY_HAND,
    "nn.LayerNorm": _BY_HAND,
})

EPSILONS = [1e-5, 1e-3, 0.1, 1.0]
ANY_EPS = st.sampled_from(EPSILONS)

# float32 on the CPU against the float64 truth: x - mean of a nearly constant slice
# around 10 is only known to ~1e-6 (one float32 ulp), and dividing by sqrt(1e-5)
# multiplies that by ~316 (then by |weight| <= 3). float64 keeps the default
# tolerance.
CPU_TOLERANCE = {torch.float32: dict(rtol=1e-4, atol=2e-3)}

# Half precision on the GPU against float64 on the CPU (inputs rounded first, so
# only the arithmetic differs). With the statistics and the affine map in float32
# the only error left is the final rounding to the input dtype (2**-8 relative for
# bfloat16, 2**-11 for float16). float32 inputs are not rounded coarser than the
# arithmetic: a nearly constant slice around 8 leaves ~1e-6 in the mean, divided by
# sqrt(eps) ~3e-3, hence atol 1e-3 there.
GPU_TOLERANCE = {torch.float32: dict(rtol=1e-4, atol=1e-3),
                 torch.float16: dict(rtol=2e-3, atol=2e-3),
                 torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}

# Slices far from 0 (a large offset, a spread of at most 2): var = E[x^2] - E[x]^2 loses
# ~offset^2 * 1e-16 to cancellation even in float64 (1e-6 of a variance near 1 at an
# offset of 1e5), while subtracting the mean first leaves ~offset * 1e-16.
LARGE_OFFSETS = [1e5, -3e5, 1e6]

# x, weight and bias are only read: any layout, stride-0 expanded views included.
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")


# ------------------------------------------------------------------ strategies

@dataclass
class Case:
    x: torch.Tensor
    normalized_shape: tuple[int, ...] | list[int] | torch.Size
    weight: torch.Tensor | None
    bias: torch.Tensor | None
    eps: float
    # Whether a call spells out the arguments that equal their defaults (weight=None,
    # bias=None, eps=1e-5) or leaves them out, so that every default is exercised.
    spelled: bool = True

    def args(self) -> tuple:
        """Fresh copies of the arguments for one call, each in the layout drawn for it."""
        def copy(t):
            return None if t is None else copy_in_layout(t)
        return copy(self.x), self.normalized_shape, copy(self.weight), copy(self.bias), self.eps

    def call(self, layer_norm):
        """``layer_norm`` of fresh copies: every argument given, or (not ``spelled``) those
        equal to their defaults left out and the others given by name."""
        x, shape, weight, bias, eps = self.args()
        if self.spelled:
            return layer_norm(x, shape, weight, bias, eps)
        given = {"weight": weight, "bias": bias, "eps": eps}
        return layer_norm(x, shape, **{k: v for k, v in given.items()
                                       if not (v is None or (k == "eps" and v == DEFAULT_EPS))})

    def text(self) -> str:
        return (f"eps={self.eps}, weight {'given' if self.weight is not None else 'None'}, "
                f"bias {'given' if self.bias is not None else 'None'}"
                + ("" if self.spelled else "; arguments equal to their defaults left out"))

    def expected(self) -> torch.Tensor:
        """F.layer_norm in float64 (exact enough to be the truth), in the input's dtype."""
        x, weight, bias = (None if t is None else t.double() for t in (self.x, self.weight, self.bias))
        return F.layer_norm(x, tuple(self.normalized_shape), weight, bias, self.eps).to(self.x.dtype)

    def tolerance(self) -> dict[str, float]:
        return CPU_TOLERANCE.get(self.x.dtype, {})


DEFAULT_EPS = 1e-5


@st.composite
def layer_norm_cases(draw, affine: str = "maybe", dtypes=(torch.float64, torch.float32),
                     low: float = -10.0, high: float = 10.0, eps=ANY_EPS,
                     min_batch_side: int = 0) -> Case:
    """0-2 batch dims (sides may be 0), 1-3 normalised dims, maybe weight and bias, each
    tensor in any memory layout (transposed, sliced out of a NaN-filled storage, expanded).

    ``affine`` is "maybe" (each of weight and bias present or not) or "never"."""
    batch = draw(shapes(min_dims=0, max_dims=2, min_side=min_batch_side, max_side=3), label="batch dims")
    normalized = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="normalized_shape")
    dtype = draw(sampled(tuple(dtypes)), label="dtype")
    with_weight = affine == "maybe" and draw(st.booleans(), label="with weight")
    with_bias = affine == "maybe" and draw(st.booleans(), label="with bias")
    form = draw(sampled((tuple, list, torch.Size)), label="normalized_shape type")
    x = draw(float_tensors((*batch, *normalized), dtype=dtype, low=low, high=high), label="x")
    weight = draw(float_tensors(normalized, dtype=dtype, low=-3, high=3), label="weight") if with_weight else None
    bias = draw(float_tensors(normalized, dtype=dtype, low=-3, high=3), label="bias") if with_bias else None
    x, weight, bias = (None if t is None else draw(any_layout(t, READ_ONLY_LAYOUTS, label=name))
                       for name, t in (("x", x), ("weight", weight), ("bias", bias)))
    return Case(x, form(normalized), weight, bias, draw(eps, label="eps"),
                spelled=draw(st.booleans(), label="defaults spelled out"))


def ordinary(impl, case: Case, why: str):
    """An anchor: layer_norm of a valid case equals F.layer_norm."""
    return anchored(lambda: case.call(impl.layer_norm), case.expected, **case.tolerance(),
                    what=f"layer_norm over normalized_shape {list(case.normalized_shape)} of x of "
                         f"shape {list(case.x.shape)} vs F.layer_norm ({why})")


def slices(t: torch.Tensor, ndims: int) -> torch.Tensor:
    """``t`` as ``(number of slices, D)``: one row per normalised slice."""
    d = math.prod(t.shape[t.dim() - ndims:])
    return t.reshape(-1, d)


# ------------------------------------------------------------------ against F.layer_norm

# The spec's examples: x = [[1, 2, 3, 6]] over (4,), then with a weight and a bias.
SPEC_X = torch.tensor([[1.0, 2.0, 3.0, 6.0]])


@pytest.mark.weight(4)
@settings(max_examples=60)
@example(Case(SPEC_X, (4,), None, None, 1e-5, spelled=False))
@example(Case(SPEC_X, (4,), torch.tensor([1.0, 1.0, 2.0, 2.0]), torch.tensor([0.0, 0.0, 0.0, 1.0]), 1e-5,
              spelled=False))
@given(layer_norm_cases())
def test_matches_f_layer_norm(impl, case):
    assert_same(case.call(impl.layer_norm), case.expected(), **case.tolerance(),
                what=f"layer_norm over normalized_shape {list(case.normalized_shape)} "
                     f"({case.text()})")


@pytest.mark.weight(2)
@settings(max_examples=50)
@given(layer_norm_cases(affine="never", low=-0.5, high=0.5, eps=st.sampled_from([0.1, 1.0]),
                        min_batch_side=1))
def test_eps_goes_inside_the_square_root(impl, case):
    """Small spreads and a large eps: where eps sits and which variance is used show."""
    assert_same(impl.layer_norm(*case.args()), case.expected(), **case.tolerance(),
                what=f"layer_norm with a large eps={case.eps} (y = (x - mean) / sqrt(var + eps), "
                     "var the biased variance)")


@settings(max_examples=30)
@given(layer_norm_cases(affine="never"))
def test_an_int_normalized_shape_means_the_last_dim(impl, case):
    d = case.x.shape[-1]
    last_dim = Case(case.x, (d,), None, None, case.eps)
    assert_same(impl.layer_norm(case.x.clone(), d, None, None, case.eps), last_dim.expected(),
                **last_dim.tolerance(), what=f"layer_norm(x, {d}) (an int normalized_shape: normalise the last dim)")


@pytest.mark.weight(2)
@settings(max_examples=50)
@given(layer_norm_cases(affine="never", dtypes=(torch.float64,), min_batch_side=1))
def test_each_slice_has_mean_zero_and_variance_var_over_var_plus_eps(impl, case):
    """Without weight and bias, every slice over ALL the normalised dims is standardised."""
    ndims = len(case.normalized_shape)
    got = impl.layer_norm(*case.args())
    assert isinstance(got, torch.Tensor) and got.shape == case.x.shape, (
        f"layer_norm returned {getattr(got, 'shape', type(got).__name__)}; expected a tensor "
        f"of the input's shape {tuple(case.x.shape)}")
    rows, x_rows = slices(got, ndims), slices(case.x, ndims)
    var = x_rows.var(dim=1, correction=0)
    assert_same(rows.mean(dim=1), torch.zeros(rows.shape[0], dtype=rows.dtype), atol=1e-6,
                what=f"mean of each slice over the last {ndims} dim(s) {list(case.normalized_shape)}")
    assert_same(rows.var(dim=1, correction=0), var / (var + case.eps), atol=1e-6,
                what=f"biased variance of each normalised slice (var / (var + eps), eps={case.eps})")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(layer_norm_cases(dtypes=(torch.float64,), min_batch_side=1))
def test_gradients_match_f_layer_norm(impl, case):
    def grads(fn, *, student: bool):
        x, shape, weight, bias, eps = case.args()
        leaves = [t.requires_grad_() for t in (x, weight, bias) if t is not None]
        out = fn(x, shape if student else tuple(shape), weight, bias, eps)
        if student and not (isinstance(out, torch.Tensor) and out.requires_grad):
            raise AssertionError("the output is detached from x: backward cannot reach it "
                                 "(no .detach(), no torch.no_grad(), no rebuilding with torch.tensor)")
        manual_seed(1)
        loss = (out * random_weights(out)).sum()
        return torch.autograd.grad(loss, leaves, allow_unused=True)

    names = [n for n, t in (("x", case.x), ("weight", case.weight), ("bias", case.bias)) if t is not None]
    expected = grads(F.layer_norm, student=False)
    got = grads(impl.layer_norm, student=True)
    for name, g, e in zip(names, got, expected):
        if g is None:
            raise AssertionError(f"no gradient reaches {name}: keep it in the graph")
        assert_same(g, e, what=f"gradient of a weighted sum of the output w.r.t. {name} "
                               "(vs F.layer_norm)")


@st.composite
def mismatched_shapes(draw, case: Case) -> tuple[tuple[int, ...], str]:
    """A normalized_shape that is not the last dims of ``case.x``: empty, one size changed
    (any of them, not only the last), or more dims than x has."""
    shape = list(case.normalized_shape)
    how = draw(st.sampled_from(["size", "empty", "too many dims"]), label="how")
    if how == "empty":
        return (), "normalized_shape is empty"
    if how == "size":
        d = draw(st.integers(0, len(shape) - 1), label="dim changed")
        shape[d] += draw(st.integers(1, 3), label="by")
    else:
        shape = [draw(st.integers(1, 3), label="extra leading size")] * (case.x.dim() - len(shape) + 1) + list(case.x.shape)
    return tuple(shape), f"normalized_shape {shape} is not the last dims of x {list(case.x.shape)}"


@settings(max_examples=30)
@given(layer_norm_cases(affine="never"), st.data())
def test_mismatched_normalized_shape_raises_value_error(impl, case, data):
    shape, when = data.draw(mismatched_shapes(case))
    with ordinary(impl, case, "the same x with its own normalized_shape"):
        with expect_raises(ValueError, when=when):
            impl.layer_norm(copy_in_layout(case.x), shape)


@pytest.mark.weight(2)
@settings(max_examples=30)
@example(Case(torch.tensor([[-1.0, -0.5, 0.25, 1.0]], dtype=torch.float64), (4,), None, None, 1e-5),
         1e6)
@given(layer_norm_cases(low=-1.0, high=1.0, dtypes=(torch.float64,)),
       st.sampled_from(LARGE_OFFSETS))
def test_slices_far_from_zero(impl, case, offset):
    """Activations with a mean far from 0 and a small spread: the variance must be the mean
    of squared deviations from the mean, not E[x^2] - E[x]^2 (cancellation). Anchored on the
    same slices around 0, so the advice reaches only an answer that is right there."""
    around_zero = replace(case)
    case.x = case.x + offset  # also a contiguous copy: every layout was tried elsewhere
    with harder_than(lambda: impl.layer_norm(*around_zero.args()), around_zero.expected,
                     what=f"layer_norm of the same slices around 0 over {list(case.normalized_shape)}, "
                          f"eps={case.eps}"):
        assert_same(impl.layer_norm(*case.args()), case.expected(),
                    what=f"layer_norm of slices around {offset:g} (spread <= 2) over "
                         f"{list(case.normalized_shape)}, eps={case.eps}, right for the same slices "
                         "around 0: subtract the mean, then square (E[x^2] - E[x]^2 cancels)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(layer_norm_cases(dtypes=(torch.float64,), low=-3.0, high=3.0, min_batch_side=1),
       st.sampled_from([0.0, 8.0, -4.0]), st.sampled_from([torch.float16, torch.bfloat16]))
def test_half_precision_on_cpu(impl, case, offset, dtype):
    """float16 and bfloat16 run on the CPU too: the result keeps the dtype, and with the
    statistics in float32 it is the float64 answer rounded once."""
    case.x = case.x + offset  # activations with a mean far from 0: a half-precision mean is coarse
    check_half_precision(impl.layer_norm, case, dtype, "cpu")


# ------------------------------------------------------------------ on the GPU

def check_half_precision(layer_norm, case: Case, dtype: torch.dtype, device: str) -> None:
    """``layer_norm`` in ``dtype`` on ``device`` vs F.layer_norm in float64 on the CPU."""
    rounded = [None if t is None else t.to(dtype) for t in (case.x, case.weight, case.bias)]
    shape = tuple(case.normalized_shape)
    x64, weight64, bias64 = (None if t is None else t.double() for t in rounded)
    expected = F.layer_norm(x64, shape, weight64, bias64, case.eps)
    x, weight, bias = (None if t is None else t.to(device) for t in rounded)
    got = layer_norm(x, shape, weight, bias, case.eps)
    assert isinstance(got, torch.Tensor), f"layer_norm returned {type(got).__name__}, not a tensor"
    assert got.dtype == dtype and got.device.type == device, (
        f"the output is {got.dtype} on {got.device}; expected {dtype} on {device}, like the input")
    assert_same(got.double().cpu(), expected,
                what=f"layer_norm in {dtype} on {device} vs float64 on the CPU (statistics and "
                     "affine map in float32, result rounded once)", **GPU_TOLERANCE[dtype])


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(layer_norm_cases(dtypes=(torch.float64,), low=-3.0, high=3.0, min_batch_side=1),
       st.sampled_from([0.0, 8.0, -4.0]), st.sampled_from([torch.float32, torch.float16, torch.bfloat16]))
def test_half_precision_on_gpu(impl, case, offset, dtype):
    case.x = case.x + offset  # activations with a mean far from 0: a half-precision mean is coarse
    check_half_precision(impl.layer_norm, case, dtype, "cuda")
