"""Where each output pixel reads (both align_corners), nearest and bilinear resizing, equal to F.interpolate."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch._decomp import decompositions

from grader.testing import assert_same, wide
from tests.numerics import float32_on_device_and_float64_oracle, weighted_grads
from tests.properties import assert_no_shared_memory
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, sampled

_INSTEAD = ("compute where each output pixel reads (torch.arange, the scale, the half-pixel offset, "
            "a clamp), then index x with integer index tensors and blend the neighbours yourself")
# Every entry point that resizes or resamples: F.interpolate and its old names, grid_sample
# (affine_grid's identity grid plus grid_sample is a bilinear resize), the nn.Upsample*
# modules, the C kernels behind them (upsample_linear1d twice is bilinear too), and torch's
# Python decompositions of those kernels with their private helpers (whose index helper
# gives resize_nearest's indices as they are).
_RESAMPLING = sorted({
    "F.interpolate", "F.upsample", "F.upsample_nearest", "F.upsample_bilinear", "F.grid_sample",
    "nn.Upsample", "nn.UpsamplingNearest2d", "nn.UpsamplingBilinear2d",
    *(f"torch.{n}" for n in dir(torch) if "grid_sampler" in n or "upsample" in n),
    *(f"torch._C._nn.{n}" for n in dir(torch._C._nn) if "upsample" in n),
    *(f"torch._decomp.decompositions.{n}" for n in dir(decompositions) if "upsample" in n or "grid_sampler" in n),
})
pytestmark = pytest.mark.exercise(points=10, forbid={name: _INSTEAD for name in _RESAMPLING})

# x is only read: any layout, stride-0 expanded views included.
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
# float32 on the GPU against float64 on the CPU, from the same float32 inputs: a blend of
# four values below 10 with weights in [0, 1].
GPU_TOLERANCE = dict(rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ strategies

@dataclass
class CoordinateCase:
    in_size: int
    out_size: int
    align_corners: bool
    # Whether a call spells out align_corners=False or leaves it out (the default).
    spelled: bool = True

    def call(self, source_coordinates):
        if self.align_corners or self.spelled:
            return source_coordinates(self.in_size, self.out_size, align_corners=self.align_corners)
        return source_coordinates(self.in_size, self.out_size)

    def expected(self) -> torch.Tensor:
        """F.interpolate's linear mode on the ramp 0, 1, ..., in_size - 1: the positions it reads."""
        ramp = torch.arange(self.in_size, dtype=torch.float64).view(1, 1, self.in_size)
        return F.interpolate(ramp, size=self.out_size, mode="linear", align_corners=self.align_corners)[0, 0]

    def text(self) -> str:
        return (f"source_coordinates({self.in_size}, {self.out_size}, align_corners={self.align_corners})"
                + ("" if self.align_corners or self.spelled else " (align_corners left out: the default)"))


@st.composite
def coordinate_cases(draw) -> CoordinateCase:
    """Input and output sizes from 1, down- and upsampling, both align_corners."""
    return CoordinateCase(draw(st.integers(1, wide(10, official=20)), label="in_size"),
                          draw(st.integers(1, wide(16, official=24)), label="out_size"),
                          draw(st.booleans(), label="align_corners"),
                          spelled=draw(st.booleans(), label="defaults spelled out"))


@dataclass
class ResizeCase:
    x: torch.Tensor
    size: int | tuple[int, int]
    align_corners: bool = False
    # Whether a bilinear call spells out align_corners=False or leaves it out (the default).
    spelled: bool = True

    @property
    def out_hw(self) -> tuple[int, int]:
        return (self.size, self.size) if isinstance(self.size, int) else self.size

    def bilinear_kwargs(self) -> dict[str, bool]:
        return {"align_corners": self.align_corners} if self.align_corners or self.spelled else {}

    def expected(self, mode: str) -> torch.Tensor:
        if mode == "nearest":
            return f_interpolate(self.x, self.size, "nearest")
        return f_interpolate(self.x, self.size, "bilinear", align_corners=self.align_corners)

    def resizes(self, impl) -> tuple[tuple[str, Callable[..., Any], dict[str, bool]], ...]:
        """(mode, the student's resize, its keyword arguments) for both resizes."""
        return (("nearest", impl.resize_nearest, {}), ("bilinear", impl.resize_bilinear, self.bilinear_kwargs()))

    def text(self, mode: str) -> str:
        shape = list(self.x.shape)
        if mode == "nearest":
            return f"resize_nearest(x, {self.size}) of {self.x.dtype} x of shape {shape}"
        left_out = "" if self.align_corners or self.spelled else " (align_corners left out: the default)"
        return (f"resize_bilinear(x, {self.size}, align_corners={self.align_corners}) of {self.x.dtype} "
                f"x of shape {shape}{left_out}")


def f_interpolate(x: torch.Tensor, size: int | tuple[int, int], mode: str,
                  align_corners: bool | None = None) -> torch.Tensor:
    """The oracle: F.interpolate to ``size`` (left out, align_corners is F.interpolate's default, False)."""
    return F.interpolate(x, size=size, mode=mode, align_corners=align_corners)


@st.composite
def resize_cases(draw, same_size: bool = False, dtypes=(torch.float64, torch.float32)) -> ResizeCase:
    """A small batch in any memory layout (transposed, sliced out of a NaN-filled storage,
    expanded) resized to sizes from 1 up (down- and upsampling, each axis on its own), or
    to its own size; the size an int where both sides agree and the draw says so. Sizes
    stay at most 25, where PyTorch's float32 nearest index is floor(i * in / out) exactly."""
    n, c = draw(st.integers(1, 2), label="N"), draw(st.integers(1, 3), label="C")
    h, w = (draw(st.integers(1, wide(6, official=12)), label=side) for side in ("H", "W"))
    if same_size:
        out_h, out_w = h, w
    else:
        out_h, out_w = (draw(st.integers(1, wide(12, official=20)), label=side) for side in ("H_out", "W_out"))
    dtype = draw(sampled(tuple(dtypes)), label="dtype")
    x = draw(any_layout(draw(float_tensors((n, c, h, w), dtype=dtype), label="x"), READ_ONLY_LAYOUTS, label="x"))
    size = out_h if out_h == out_w and draw(st.booleans(), label="size as one int") else (out_h, out_w)
    return ResizeCase(x, size, draw(st.booleans(), label="align_corners"),
                      spelled=draw(st.booleans(), label="defaults spelled out"))


# The spec's example image.
SPEC_X = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])


# ------------------------------------------------------------------ where each output pixel reads

@pytest.mark.weight(2)
@settings(max_examples=60)
# The spec's examples, and a single output pixel with align_corners (nothing to divide by).
@example(CoordinateCase(2, 4, False, spelled=False))
@example(CoordinateCase(2, 4, True))
@example(CoordinateCase(5, 1, True))
@given(coordinate_cases())
def test_source_coordinates_match_f_interpolate(impl, case):
    """F.interpolate's linear mode of the ramp 0, 1, ..., in_size - 1 reads back the
    position each output pixel reads."""
    assert_same(case.call(impl.source_coordinates), case.expected(),
                what=f"{case.text()} (what F.interpolate's linear mode reads: the half-pixel "
                     "offset when align_corners=False, clamped to [0, in_size - 1])")


# ------------------------------------------------------------------ resizing

@pytest.mark.weight(2)
@settings(max_examples=50)
@example(ResizeCase(SPEC_X, 4))  # the spec's example
@given(resize_cases())
def test_resize_nearest_matches_f_interpolate(impl, case):
    assert_same(impl.resize_nearest(copy_in_layout(case.x), case.size), case.expected("nearest"),
                what=f"{case.text('nearest')} (vs F.interpolate mode='nearest': floor(i * in / out))")


@pytest.mark.weight(3)
@settings(max_examples=60)
# The spec's examples: (2, 4) with the default align_corners, then align_corners=True.
@example(ResizeCase(SPEC_X, (2, 4), False, spelled=False))
@example(ResizeCase(SPEC_X, (2, 4), True))
@given(resize_cases())
def test_resize_bilinear_matches_f_interpolate(impl, case):
    assert_same(impl.resize_bilinear(copy_in_layout(case.x), case.size, **case.bilinear_kwargs()),
                case.expected("bilinear"),
                what=f"{case.text('bilinear')} (vs F.interpolate mode='bilinear')")


@settings(max_examples=20)
@given(resize_cases(same_size=True))
def test_resizing_to_the_same_size_gives_a_new_tensor_equal_to_x(impl, case):
    """Both resizes of x to its own size: x's values, in memory of their own (F.interpolate
    returns a new tensor too, so the caller may change one without the other)."""
    for mode, resize, kwargs in case.resizes(impl):
        x = copy_in_layout(case.x)
        got = resize(x, case.size, **kwargs)
        assert_same(got, case.expected(mode), what=f"{case.text(mode)}: the size of x itself (x's values)")
        assert_no_shared_memory(got, x, what=f"{case.text(mode)}: the size of x itself")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(resize_cases(dtypes=(torch.float64,)))
def test_gradients_match_f_interpolate(impl, case):
    """Both resizes stay in the autograd graph: the gradient of a weighted sum of the output
    reaches x as F.interpolate's does (each input pixel collects the weights it was read with)."""
    for mode, resize, kwargs in case.resizes(impl):
        (expected,) = weighted_grads(functools.partial(f_interpolate, size=case.size, mode=mode, **kwargs),
                                     [copy_in_layout(case.x).requires_grad_()])
        (got,) = weighted_grads(functools.partial(resize, size=case.size, **kwargs),
                                [copy_in_layout(case.x).requires_grad_()], names="x")
        assert got is not None, f"no gradient reaches x through {case.text(mode)}: keep it in the graph"
        assert_same(got, expected, what=f"gradient w.r.t. x of a weighted sum of {case.text(mode)}")


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(resize_cases(dtypes=(torch.float64,)))
def test_float32_on_gpu_matches_float64(impl, case):
    """float32 on the GPU stays float32 on the GPU and equals float64 F.interpolate on the CPU."""
    for mode, resize, kwargs in case.resizes(impl):
        got, expected = float32_on_device_and_float64_oracle(
            "cuda", functools.partial(resize, size=case.size),
            functools.partial(f_interpolate, size=case.size, mode=mode), [case.x], kwargs)
        assert isinstance(got, torch.Tensor), f"{case.text(mode)} returned {type(got).__name__}, not a tensor"
        assert got.dtype == torch.float32 and got.device.type == "cuda", (
            f"{case.text(mode)} on float32 cuda x gave {got.dtype} on {got.device}; expected float32 on "
            "cuda, like x (make index tensors on x.device and weights in x.dtype)")
        assert_same(got.cpu().double(), expected,
                    what=f"float32 {case.text(mode)} on cuda (vs float64 F.interpolate on the CPU)",
                    **GPU_TOLERANCE)
