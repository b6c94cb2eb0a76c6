"""Transposed convolution as insert zeros, pad, flip the kernel, convolve; equal to F.conv_transpose2d."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same
from tests.numerics import float32_on_device_and_float64_oracle, weighted_grads
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, int_tensors, relaid

_INSTEAD = ("spread x out with stride - 1 zeros between pixels, F.pad it by kernel - 1 - padding, "
            "flip the kernel (and swap its channel dims), then F.conv2d with stride 1")
pytestmark = pytest.mark.exercise(points=10, forbid={
    **{f"F.conv_transpose{d}d": _INSTEAD for d in (1, 2, 3)},
    **{f"nn.ConvTranspose{d}d": _INSTEAD for d in (1, 2, 3)},
    "torch.convolution": _INSTEAD,
})

# float32 on the GPU against float64 on the CPU, from the same float32 inputs.
GPU_TOLERANCE = dict(rtol=1e-4, atol=1e-4)

# Every tensor argument is only read: any layout, stride-0 expanded views included.
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
# Half precision on the CPU with integer inputs in [-3, 3]: every output is a sum of at
# most 3 * 3 * 3 products below 10, an integer below 256, exact in float16 and bfloat16.
HALF_DTYPES = [torch.float16, torch.bfloat16]


# ------------------------------------------------------------------ strategies

@dataclass
class TransposeCase:
    x: torch.Tensor
    weight: torch.Tensor  # (C_in, C_out, kh, kw)
    bias: torch.Tensor | None
    stride: int | tuple[int, int]
    padding: int | tuple[int, int]
    # Whether a call spells out the arguments that equal their defaults (bias=None,
    # stride=1, padding=0) or leaves them out, so that every default is exercised.
    spelled: bool = True

    def kwargs(self) -> dict:
        given = dict(stride=self.stride, padding=self.padding)
        return {k: v for k, v in given.items() if self.spelled or v != TRANSPOSE_DEFAULTS[k]}

    def clones(self) -> tuple:
        """Fresh copies, each in the memory layout drawn for it (no bias at all where it is
        None and the defaults are left out)."""
        if self.bias is None and not self.spelled:
            return (copy_in_layout(self.x), copy_in_layout(self.weight))
        return (copy_in_layout(self.x), copy_in_layout(self.weight),
                None if self.bias is None else copy_in_layout(self.bias))

    def text(self) -> str:
        return (f"stride={self.stride}, padding={self.padding}, kernel "
                f"{tuple(self.weight.shape[-2:])}, bias {'given' if self.bias is not None else 'None'}"
                + ("" if self.spelled else " (arguments equal to their defaults left out)"))


TRANSPOSE_DEFAULTS = {"stride": 1, "padding": 0}


def as_int_or_pair(draw, along_h: int, along_w: int) -> int | tuple[int, int]:
    if along_h == along_w and draw(st.booleans()):
        return along_h
    return (along_h, along_w)


def values(shape: tuple[int, ...], dtype: torch.dtype) -> st.SearchStrategy[torch.Tensor]:
    """float64 values in [-3, 3]; integers in [-3, 3] converted to any other dtype."""
    if dtype == torch.float64:
        return float_tensors(shape, low=-3, high=3)
    return int_tensors(shape, -3, 3).map(lambda t: t.to(dtype))


@st.composite
def transpose_cases(draw, with_settings: bool = True, bias: bool = True,
                    dtype: torch.dtype = torch.float64) -> TransposeCase:
    """Small x and weight, each in any memory layout (transposed, sliced out of a NaN-filled
    storage, expanded); per dim kernel 1-3, stride 1-3 and 0 <= padding <= kernel - 1,
    small enough for an output of at least one pixel (stride 1, padding 0 without
    ``with_settings``)."""
    n = draw(st.integers(1, 2), label="N")
    c_in, c_out = draw(st.integers(1, 3), label="C_in"), draw(st.integers(1, 3), label="C_out")
    dims = []
    for axis in ("h", "w"):
        side = draw(st.integers(1, 4), label=axis.upper())
        k = draw(st.integers(1, 3), label=f"k{axis}")
        s = draw(st.integers(1, 3), label=f"stride_{axis}") if with_settings else 1
        most = min(k - 1, ((side - 1) * s + k - 1) // 2)  # keeps H_out >= 1
        p = draw(st.integers(0, most), label=f"padding_{axis}") if with_settings else 0
        dims.append((side, k, s, p))
    (h, kh, sh, ph), (w, kw, sw, pw) = dims
    x = draw(any_layout(draw(values((n, c_in, h, w), dtype), label="x"), READ_ONLY_LAYOUTS,
                        label="x"))
    weight = draw(any_layout(draw(values((c_in, c_out, kh, kw), dtype), label="weight"),
                             READ_ONLY_LAYOUTS, label="weight"))
    b = draw(st.none() | values((c_out,), dtype), label="bias") if bias else None
    if b is not None:
        b = draw(any_layout(b, READ_ONLY_LAYOUTS, label="bias"))
    return TransposeCase(x, weight, b, as_int_or_pair(draw, sh, sw), as_int_or_pair(draw, ph, pw),
                         spelled=draw(st.booleans(), label="defaults spelled out"))


def expected_output(case: TransposeCase) -> torch.Tensor:
    return F.conv_transpose2d(case.x, case.weight, case.bias, **case.kwargs())


# ------------------------------------------------------------------ properties

@pytest.mark.weight(2)
@settings(max_examples=30)
@example(TransposeCase(relaid(torch.arange(16.).reshape(2, 2, 2, 2), "permuted"),
                       relaid(torch.arange(12.).reshape(2, 3, 2, 1), "sliced"), None, 1, 0))
@given(transpose_cases(with_settings=False))
def test_matches_f_conv_transpose2d_stride_1(impl, case):
    assert_same(impl.conv_transpose2d(*case.clones()), expected_output(case),
                what=f"conv_transpose2d with {case.text()} (vs F.conv_transpose2d)")


# The spec's example (d2l's): every pixel of x stamps a scaled copy of the kernel.
SPEC_CASE = TransposeCase(torch.tensor([[[[0.0, 1.0], [2.0, 3.0]]]]), torch.tensor([[[[0.0, 1.0], [2.0, 3.0]]]]),
                          None, 1, 0, spelled=False)


@pytest.mark.weight(4)
@settings(max_examples=60)
@example(SPEC_CASE)
@given(transpose_cases())
def test_matches_f_conv_transpose2d(impl, case):
    assert_same(impl.conv_transpose2d(*case.clones(), **case.kwargs()), expected_output(case),
                what=f"conv_transpose2d with {case.text()} (vs F.conv_transpose2d)")


@settings(max_examples=25)
@given(transpose_cases())
def test_output_shape(impl, case):
    got = impl.conv_transpose2d(*case.clones(), **case.kwargs())
    expected = expected_output(case)
    assert isinstance(got, torch.Tensor), f"conv_transpose2d returned {type(got).__name__}"
    assert tuple(got.shape) == tuple(expected.shape), (
        f"output shape {tuple(got.shape)} with input {tuple(case.x.shape)} and {case.text()}; "
        f"expected {tuple(expected.shape)}: H_out = (H - 1) * stride - 2 * padding + kernel")
    assert_same(got, expected, what=f"conv_transpose2d with {case.text()} (vs F.conv_transpose2d), "
                                    "beside its shape")


@settings(max_examples=25)
@given(transpose_cases(bias=False))
def test_is_the_input_gradient_of_conv2d(impl, case):
    """conv_transpose2d(g, W) is how a gradient g flows back through conv2d(., W)."""
    n, _, h, w = case.x.shape
    h_out, w_out = expected_output(case).shape[-2:]
    y = torch.zeros(n, case.weight.shape[1], h_out, w_out, dtype=torch.float64, requires_grad=True)
    forward = F.conv2d(y, case.weight, **case.kwargs())
    assert forward.shape[-2:] == (h, w)
    # (forward * x).sum(), not grad_outputs=x: grad_outputs imports sympy (~0.6 s) on first use
    (expected,) = torch.autograd.grad((forward * case.x).sum(), y)
    assert_same(impl.conv_transpose2d(*case.clones(), **case.kwargs()), expected,
                what=f"conv_transpose2d(g, W) with {case.text()}, which must equal the gradient "
                     "that g sends back through conv2d(y, W) to y")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(transpose_cases())
def test_gradients_match_f_conv_transpose2d(impl, case):
    def grads(fn) -> tuple[torch.Tensor | None, ...]:
        leaves = [None if t is None else t.requires_grad_() for t in case.clones()]
        return weighted_grads(fn, leaves, names="x, weight and bias", **case.kwargs())

    expected = grads(F.conv_transpose2d)
    got = grads(impl.conv_transpose2d)
    for name, g, e in zip(("x", "weight", "bias"), got, expected):
        assert g is not None, f"no gradient reaches {name}: keep it in the graph"
        assert_same(g, e, what=f"gradient w.r.t. {name} of a weighted sum of the output, "
                               f"with {case.text()}")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(st.sampled_from(HALF_DTYPES).flatmap(lambda dtype: transpose_cases(dtype=dtype)))
def test_half_precision_on_cpu_keeps_the_dtype(impl, case):
    """float16 and bfloat16 run on the CPU: the result keeps the input's dtype and equals
    float64 F.conv_transpose2d (integer inputs, so exact in any summation order)."""
    dtype = case.x.dtype
    got = impl.conv_transpose2d(*case.clones(), **case.kwargs())
    assert isinstance(got, torch.Tensor) and got.dtype == dtype, (
        f"conv_transpose2d of {dtype} inputs returned "
        f"{got.dtype if isinstance(got, torch.Tensor) else type(got).__name__}; expected {dtype}, "
        "like the input (x.new_zeros for the spread input, no .float() without casting back)")
    expected = F.conv_transpose2d(*(None if t is None else t.double()
                                    for t in (case.x, case.weight, case.bias)), **case.kwargs())
    assert_same(got.double(), expected, what=f"conv_transpose2d in {dtype} with {case.text()} vs "
                                              "float64 F.conv_transpose2d (integer inputs: exact)")


# ------------------------------------------------------------------ GPU

def check_float32_on(device: str, conv_transpose, case: TransposeCase) -> None:
    """``conv_transpose`` in float32 on ``device`` against float64 F.conv_transpose2d on
    the CPU, from the same float32-rounded inputs; the output stays float32 on ``device``."""
    got, expected = float32_on_device_and_float64_oracle(
        device, conv_transpose, F.conv_transpose2d, case.clones(), case.kwargs())
    assert isinstance(got, torch.Tensor), f"conv_transpose2d returned {type(got).__name__}"
    assert got.dtype == torch.float32 and got.device.type == device, (
        f"the output is {got.dtype} on {got.device}; expected float32 on {device}, like the "
        "inputs (make the zero-spread input with x.new_zeros)")
    assert_same(got.cpu().double(), expected,
                what=f"float32 conv_transpose2d on {device} with {case.text()} "
                     "(vs float64 F.conv_transpose2d on the CPU)", **GPU_TOLERANCE)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(transpose_cases())
def test_float32_on_gpu_matches_float64(impl, case):
    check_float32_on("cuda", impl.conv_transpose2d, case)
