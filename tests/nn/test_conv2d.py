"""2-D convolution (cross-correlation) with stride, padding and dilation, equal to F.conv2d."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.contract.expect import assert_same
from tests.numerics import float32_on_device_and_float64_oracle, manual_seed, random_weights
from tests.strategies import float_tensors

_INSTEAD = ("slide the kernel yourself: F.pad for the zeros, then loops over the output "
            "positions, or Tensor.unfold / F.unfold for all windows at once, and a sum of products")
pytestmark = pytest.mark.exercise(points=15, forbid={
    **{f"F.conv{d}d": _INSTEAD for d in (1, 2, 3)},
    **{f"F.conv_transpose{d}d": _INSTEAD for d in (1, 2, 3)},
    "torch.convolution": _INSTEAD,
    **{f"nn.Conv{d}d": _INSTEAD for d in (1, 2, 3)},
})

# float32 on the GPU against float64 on the CPU (inputs rounded to float32 first,
# so only the arithmetic differs): at most 3 * 3 * 3 products of values below 3.
GPU_TOLERANCE = dict(rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ strategies

@st.composite
def corr2d_cases(draw) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, k): an (H, W) map and a (kh, kw) kernel that fits inside it."""
    h, w = draw(st.integers(1, 6), label="H"), draw(st.integers(1, 6), label="W")
    kh, kw = draw(st.integers(1, min(h, 4)), label="kh"), draw(st.integers(1, min(w, 4)), label="kw")
    x = draw(float_tensors((h, w), low=-3, high=3))
    k = draw(float_tensors((kh, kw), low=-3, high=3))
    return x, k


@dataclass
class ConvCase:
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None
    stride: int | tuple[int, int]
    padding: int | tuple[int, int]
    dilation: int | tuple[int, int]

    def kwargs(self) -> dict:
        return dict(stride=self.stride, padding=self.padding, dilation=self.dilation)

    def clones(self) -> tuple:
        return (self.x.clone(), self.weight.clone(),
                None if self.bias is None else self.bias.clone())


def as_int_or_pair(draw, along_h: int, along_w: int) -> int | tuple[int, int]:
    """An int where both dims agree and the draw says so, else the pair."""
    if along_h == along_w and draw(st.booleans()):
        return along_h
    return (along_h, along_w)


@st.composite
def conv_cases(draw, with_settings: bool = True) -> ConvCase:
    """A small batch, weight and maybe bias; stride 1-3, padding 0-2, dilation 1-2
    per dim (all 1/0 without ``with_settings``), sides large enough for one window."""
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
    x = draw(float_tensors((n, c_in, h, w), low=-3, high=3))
    weight = draw(float_tensors((c_out, c_in, kh, kw), low=-3, high=3))
    bias = draw(st.none() | float_tensors((c_out,), low=-3, high=3))
    return ConvCase(x, weight, bias, as_int_or_pair(draw, sh, sw),
                    as_int_or_pair(draw, ph, pw), as_int_or_pair(draw, dh, dw))


def expected_conv(case: ConvCase) -> torch.Tensor:
    return F.conv2d(case.x, case.weight, case.bias, **case.kwargs())


def settings_text(case: ConvCase) -> str:
    return (f"stride={case.stride}, padding={case.padding}, dilation={case.dilation}, "
            f"bias {'given' if case.bias is not None else 'None'}")


# ------------------------------------------------------------------ corr2d

@pytest.mark.weight(2)
@settings(max_examples=40)
@given(corr2d_cases())
def test_corr2d_matches_f_conv2d(impl, case):
    x, k = case
    expected = F.conv2d(x[None, None], k[None, None])[0, 0]
    assert_same(impl.corr2d(x.clone(), k.clone()), expected,
                what="corr2d(x, k) (valid cross-correlation: no kernel flip, no padding)")


# ------------------------------------------------------------------ conv2d

@pytest.mark.weight(3)
@settings(max_examples=30)
@given(conv_cases(with_settings=False))
def test_conv2d_matches_f_conv2d_by_default(impl, case):
    assert_same(impl.conv2d(*case.clones()), expected_conv(case),
                what=f"conv2d(x, weight, bias) with {settings_text(case)} (vs F.conv2d)")


@pytest.mark.weight(4)
@settings(max_examples=60)
@given(conv_cases())
def test_conv2d_matches_f_conv2d_with_stride_padding_dilation(impl, case):
    assert_same(impl.conv2d(*case.clones(), **case.kwargs()), expected_conv(case),
                what=f"conv2d with {settings_text(case)} (vs F.conv2d)")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(conv_cases())
def test_conv2d_gradients_match_f_conv2d(impl, case):
    def grads(conv) -> tuple[torch.Tensor | None, ...]:
        leaves = [None if t is None else t.clone().requires_grad_() for t in case.clones()]
        out = conv(*leaves, **case.kwargs())
        if not isinstance(out, torch.Tensor):
            raise AssertionError(f"the function returned {type(out).__name__}, not a tensor")
        if not out.requires_grad:
            raise AssertionError("the output is not connected to x, weight and bias: backward "
                                 "cannot reach them (no .item(), torch.tensor(...) or .detach())")
        manual_seed(1)
        inputs = [t for t in leaves if t is not None]
        weights = random_weights(out)
        return torch.autograd.grad((out * weights).sum(), inputs, allow_unused=True)

    expected = grads(F.conv2d)
    got = grads(impl.conv2d)
    for name, g, e in zip(("x", "weight", "bias"), got, expected):
        assert g is not None, f"no gradient reaches {name}: keep it in the graph"
        assert_same(g, e, what=f"gradient w.r.t. {name} of a weighted sum of the output, "
                               f"with {settings_text(case)}")


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
