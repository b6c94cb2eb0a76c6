"""2-D convolution (cross-correlation) with stride, padding and dilation, equal to F.conv2d."""

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

_INSTEAD = ("slide the kernel yourself: F.pad for the zeros, then loops over the output "
            "positions, or Tensor.unfold / F.unfold for all windows at once, and a sum of products")
pytestmark = pytest.mark.exercise(points=15, forbid={
    **{f"F.conv{d}d": _INSTEAD for d in (1, 2, 3)},
    **{f"F.conv_transpose{d}d": _INSTEAD for d in (1, 2, 3)},
    "torch.convolution": _INSTEAD,
    **{f"nn.Conv{d}d": _INSTEAD for d in (1, 2, 3)},
    # a convolution's backward computes one too (the weight's gradient correlates the input with
    # the output's), and oneDNN's fused convolution is one (red team: 15/15 through torch.ops)
    "torch.nn.grad": _INSTEAD,
    "torch.ops.aten.convolution_backward": _INSTEAD,
    "torch.ops.mkldnn._convolution_pointwise": _INSTEAD,
})

# float32 on the GPU against float64 on the CPU (inputs rounded to float32 first,
# so only the arithmetic differs): at most 3 * 3 * 3 products of values below 3.
GPU_TOLERANCE = dict(rtol=1e-4, atol=1e-4)

# Every tensor argument is only read: any layout, stride-0 expanded views included.
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
# Half precision on the CPU with integer inputs in [-3, 3]: every product and every sum
# of at most 3 * 3 * 3 of them is an integer below 256, exact in float16 and bfloat16,
# so any summation order gives the float64 answer exactly.
HALF_DTYPES = [torch.float16, torch.bfloat16]


# ------------------------------------------------------------------ strategies

@st.composite
def corr2d_cases(draw, dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, k): an (H, W) map and a (kh, kw) kernel that fits inside it, each in any memory
    layout; float64 values in [-3, 3], or integers in [-3, 3] for another dtype."""
    h, w = draw(st.integers(1, 6), label="H"), draw(st.integers(1, 6), label="W")
    kh, kw = draw(st.integers(1, min(h, 4)), label="kh"), draw(st.integers(1, min(w, 4)), label="kw")
    x = draw(any_layout(draw(values((h, w), dtype), label="x"), READ_ONLY_LAYOUTS, label="x"))
    k = draw(any_layout(draw(values((kh, kw), dtype), label="k"), READ_ONLY_LAYOUTS, label="k"))
    return x, k


def values(shape: tuple[int, ...], dtype: torch.dtype) -> st.SearchStrategy[torch.Tensor]:
    """float64 values in [-3, 3]; integers in [-3, 3] converted to any other dtype."""
    if dtype == torch.float64:
        return float_tensors(shape, low=-3, high=3)
    return int_tensors(shape, -3, 3).map(lambda t: t.to(dtype))


@dataclass
class ConvCase:
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None
    stride: int | tuple[int, int]
    padding: int | tuple[int, int]
    dilation: int | tuple[int, int]
    # Whether a call spells out the arguments that equal their defaults (bias=None,
    # stride=1, padding=0, dilation=1) or leaves them out, so that every default is exercised.
    spelled: bool = True

    def kwargs(self) -> dict:
        given = dict(stride=self.stride, padding=self.padding, dilation=self.dilation)
        return {k: v for k, v in given.items() if self.spelled or v != CONV_DEFAULTS[k]}

    def clones(self) -> tuple:
        """Fresh copies, each in the memory layout drawn for it (no bias at all where it is
        None and the defaults are left out)."""
        if self.bias is None and not self.spelled:
            return (copy_in_layout(self.x), copy_in_layout(self.weight))
        return (copy_in_layout(self.x), copy_in_layout(self.weight),
                None if self.bias is None else copy_in_layout(self.bias))


CONV_DEFAULTS = {"stride": 1, "padding": 0, "dilation": 1}


def as_int_or_pair(draw, along_h: int, along_w: int) -> int | tuple[int, int]:
    """An int where both dims agree and the draw says so, else the pair."""
    if along_h == along_w and draw(st.booleans()):
        return along_h
    return (along_h, along_w)


@st.composite
def conv_cases(draw, with_settings: bool = True, dtype: torch.dtype = torch.float64) -> ConvCase:
    """A small batch, weight and maybe bias, each in any memory layout (transposed, sliced
    out of a NaN-filled storage, expanded); stride 1-3, padding 0-2, dilation 1-2 per dim
    (all 1/0 without ``with_settings``), sides large enough for one window. Values as
    ``values`` gives them for ``dtype``."""
    n = draw(st.integers(1, 2), label="N")
    c_in, c_out = draw(st.integers(1, 3), label="C_in"), draw(st.integers(1, 3), label="C_out")
    dims = []
    for axis in ("h", "w"):
        k = draw(st.integers(1, 3), label=f"k{axis}")
        s, p, d = ((draw(st.integers(1, 3), label=f"stride_{axis}"),
                    draw(st.integers(0, 2), label=f"padding_{axis}"),
                    draw(st.integers(1, 2), label=f"dilation_{axis}")) if with_settings else (1, 0, 1))
        smallest = max(1, d * (k - 1) + 1 - 2 * p)
        side = draw(st.integers(smallest, max(smallest, 6)), label=axis.upper())
        dims.append((side, k, s, p, d))
    (h, kh, sh, ph, dh), (w, kw, sw, pw, dw) = dims
    x = draw(any_layout(draw(values((n, c_in, h, w), dtype), label="x"), READ_ONLY_LAYOUTS,
                        label="x"))
    weight = draw(any_layout(draw(values((c_out, c_in, kh, kw), dtype), label="weight"),
                             READ_ONLY_LAYOUTS, label="weight"))
    bias = draw(st.none() | values((c_out,), dtype), label="bias")
    if bias is not None:
        bias = draw(any_layout(bias, READ_ONLY_LAYOUTS, label="bias"))
    return ConvCase(x, weight, bias, as_int_or_pair(draw, sh, sw),
                    as_int_or_pair(draw, ph, pw), as_int_or_pair(draw, dh, dw),
                    spelled=draw(st.booleans(), label="defaults spelled out"))


def expected_conv(case: ConvCase) -> torch.Tensor:
    return F.conv2d(case.x, case.weight, case.bias, **case.kwargs())


def settings_text(case: ConvCase) -> str:
    return (f"stride={case.stride}, padding={case.padding}, dilation={case.dilation}, "
            f"bias {'given' if case.bias is not None else 'None'}"
            + ("" if case.spelled else " (arguments equal to their defaults left out)"))


# ------------------------------------------------------------------ corr2d

@pytest.mark.weight(2)
@settings(max_examples=40)
@example((torch.arange(9.0).reshape(3, 3), torch.tensor([[0.0, 1.0], [2.0, 3.0]])))  # the spec's example
@given(corr2d_cases())
def test_corr2d_matches_f_conv2d(impl, case):
    x, k = case
    expected = F.conv2d(x[None, None], k[None, None])[0, 0]
    assert_same(impl.corr2d(copy_in_layout(x), copy_in_layout(k)), expected,
                what="corr2d(x, k) (valid cross-correlation: no kernel flip, no padding)")


@settings(max_examples=25)
@given(corr2d_cases())
def test_corr2d_gradients_match_f_conv2d(impl, case):
    """corr2d stays in the autograd graph: gradients reach x and k."""
    x, k = case

    def leaves() -> list[torch.Tensor]:
        return [copy_in_layout(x).requires_grad_(), copy_in_layout(k).requires_grad_()]

    expected = weighted_grads(lambda a, b: F.conv2d(a[None, None], b[None, None])[0, 0], leaves())
    got = weighted_grads(impl.corr2d, leaves())
    for name, g, e in zip(("x", "k"), got, expected):
        assert g is not None, f"no gradient reaches {name}: keep corr2d in the graph"
        assert_same(g, e, what=f"gradient w.r.t. {name} of a weighted sum of corr2d(x, k)")


# ------------------------------------------------------------------ conv2d

@pytest.mark.weight(3)
@settings(max_examples=30)
@given(conv_cases(with_settings=False))
def test_conv2d_matches_f_conv2d_by_default(impl, case):
    assert_same(impl.conv2d(*case.clones()), expected_conv(case),
                what=f"conv2d(x, weight, bias) with {settings_text(case)} (vs F.conv2d)")


@pytest.mark.weight(4)
@settings(max_examples=60)
# The spec's examples: a bias and padding=1 keep 5x5; stride=2 without a bias.
@example(ConvCase(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), torch.tensor([0.0, 1.0, 2.0]), 1, 1, 1,
                  spelled=False))
@example(ConvCase(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), None, 2, 0, 1, spelled=False))
@given(conv_cases())
def test_conv2d_matches_f_conv2d_with_stride_padding_dilation(impl, case):
    assert_same(impl.conv2d(*case.clones(), **case.kwargs()), expected_conv(case),
                what=f"conv2d with {settings_text(case)} (vs F.conv2d)")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(conv_cases())
def test_conv2d_gradients_match_f_conv2d(impl, case):
    def leaves() -> list[torch.Tensor | None]:
        return [None if t is None else t.requires_grad_() for t in case.clones()]

    expected = weighted_grads(F.conv2d, leaves(), **case.kwargs())
    got = weighted_grads(impl.conv2d, leaves(), **case.kwargs())
    for name, g, e in zip(("x", "weight", "bias"), got, expected):
        assert g is not None, f"no gradient reaches {name}: keep it in the graph"
        assert_same(g, e, what=f"gradient w.r.t. {name} of a weighted sum of the output, "
                               f"with {settings_text(case)}")


@pytest.mark.weight(2)
@settings(max_examples=20)
@example((ConvCase(relaid(torch.ones(1, 2, 4, 4, dtype=torch.bfloat16), "sliced"),
                   relaid(torch.ones(3, 2, 2, 2, dtype=torch.bfloat16), "permuted"), None, 1, 0, 1),
          (torch.ones(3, 3, dtype=torch.bfloat16), torch.ones(2, 2, dtype=torch.bfloat16))))
@given(st.sampled_from(HALF_DTYPES).flatmap(
    lambda dtype: st.tuples(conv_cases(dtype=dtype), corr2d_cases(dtype=dtype))))
def test_half_precision_on_cpu_keeps_the_dtype(impl, cases):
    """float16 and bfloat16 run on the CPU: the result keeps the input's dtype and equals
    float64 F.conv2d (integer inputs, so exact in any summation order)."""
    conv_case, (x, k) = cases
    dtype = conv_case.x.dtype
    for name, got, expected in (
            ("conv2d", lambda: impl.conv2d(*conv_case.clones(), **conv_case.kwargs()),
             lambda: F.conv2d(*(None if t is None else t.double() for t in
                                (conv_case.x, conv_case.weight, conv_case.bias)), **conv_case.kwargs())),
            ("corr2d", lambda: impl.corr2d(copy_in_layout(x), copy_in_layout(k)),
             lambda: F.conv2d(x.double()[None, None], k.double()[None, None])[0, 0])):
        out = got()
        assert isinstance(out, torch.Tensor) and out.dtype == dtype, (
            f"{name} of {dtype} inputs returned "
            f"{out.dtype if isinstance(out, torch.Tensor) else type(out).__name__}; expected "
            f"{dtype}, like the input (x.new_zeros, or no .float() without casting back)")
        assert_same(out.double(), expected(), what=f"{name} in {dtype} vs float64 F.conv2d "
                                                   "(integer inputs: exact in any order)")


# ------------------------------------------------------------------ GPU

def check_float32_on(device: str, conv, case: ConvCase) -> None:
    """``conv`` in float32 on ``device`` against float64 F.conv2d on the CPU, from the
    same float32-rounded inputs; the output must stay float32 on ``device``."""
    got, expected = float32_on_device_and_float64_oracle(device, conv, F.conv2d, case.clones(),
                                                         case.kwargs())
    assert isinstance(got, torch.Tensor), f"conv2d returned {type(got).__name__}, not a tensor"
    assert got.dtype == torch.float32 and got.device.type == device, (
        f"the output is {got.dtype} on {got.device}; expected float32 on {device}, like the "
        "inputs (make new tensors with x.new_zeros or dtype=x.dtype, device=x.device)")
    assert_same(got.cpu().double(), expected,
                what=f"float32 conv2d on {device} with {settings_text(case)} "
                     "(vs float64 F.conv2d on the CPU)", **GPU_TOLERANCE)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(conv_cases())
def test_float32_on_gpu_matches_float64(impl, case):
    check_float32_on("cuda", impl.conv2d, case)
