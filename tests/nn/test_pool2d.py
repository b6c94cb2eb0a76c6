"""2-D max and average pooling with kernel, stride and padding, equal to F.max_pool2d / F.avg_pool2d."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises
from tests.numerics import manual_seed, random_weights
from tests.properties import anchored, assert_no_shared_memory, assert_ordinary
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, int_tensors

_INSTEAD = ("slide the window yourself: F.pad (value=-inf for max, 0 for avg), Tensor.unfold "
            "along H and then W, and amax / sum over the two window dims")
# "F.*pool*": every pooling entry point of torch.nn.functional, torch and its C kernels
# (the nn.*Pool* modules call these, so they are refused too).
_POOLING = sorted({*(f"F.{n}" for n in dir(F) if "pool" in n and not n.startswith("_")),
                   *(f"torch.{n}" for n in dir(torch) if "pool" in n),
                   *(f"torch._C._nn.{n}" for n in dir(torch._C._nn) if "pool" in n)})
pytestmark = pytest.mark.exercise(points=10, forbid={name: _INSTEAD for name in _POOLING})

MODES = {"max": F.max_pool2d, "avg": F.avg_pool2d}
# Reduced precision on the GPU against float64 on the CPU (inputs rounded first, so
# only the arithmetic differs). A max is exact in any dtype; an average of at most
# 9 integers below 110 rounds once or a few times.
GPU_TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5),
                 torch.float16: dict(rtol=2e-3, atol=1e-3),
                 torch.bfloat16: dict(rtol=2e-2, atol=1e-2)}
# The same on the CPU, with integers in [-12, 12]: a window's sum (at most 9 of them) is
# exact in float16 and bfloat16 in any order, so only the division rounds, once.
CPU_HALF_TOLERANCE = {torch.float16: dict(rtol=1e-3, atol=1e-3),
                      torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


# ------------------------------------------------------------------ strategies

@dataclass
class PoolCase:
    x: torch.Tensor
    kernel: int | tuple[int, int]
    stride: int | tuple[int, int] | None  # None: left out of the call (the default)
    padding: int | tuple[int, int]
    # Whether a call spells out the arguments that equal their defaults (padding=0,
    # mode="max") or leaves them out, so that every default is exercised.
    spelled: bool = True

    def kwargs(self) -> dict[str, Any]:
        given_stride = {} if self.stride is None else {"stride": self.stride}
        given_padding = {} if self.padding == 0 and not self.spelled else {"padding": self.padding}
        return dict(kernel=self.kernel, **given_padding, **given_stride)

    def mode(self, mode: str) -> dict[str, str]:
        """``mode=`` for a call, left out where it is the default and so drawn."""
        return {} if mode == "max" and not self.spelled else {"mode": mode}

    def expected(self, mode: str, x: torch.Tensor | None = None) -> torch.Tensor:
        """PyTorch's own pooling of ``x`` (default: the case's input)."""
        return MODES[mode](self.x if x is None else x, self.kernel, self.stride, self.padding)


def int_or_pair(draw, along_h: int, along_w: int, label: str) -> int | tuple[int, int]:
    """An int where both dims agree and the draw says so, else the pair (H, W)."""
    if along_h == along_w and draw(st.booleans(), label=f"{label} as an int"):
        return along_h
    return (along_h, along_w)


def distinct_values(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Distinct small integers (half of them negative) in a random order, from torch's
    generator, reseeded per example: no ties, so every window has one maximum."""
    numel = torch.Size(shape).numel()
    return (torch.randperm(numel) - numel // 2).reshape(shape).to(dtype)


@st.composite
def pool_cases(draw, stride: str = "maybe", dtype: torch.dtype = torch.float64,
               small_ints: bool = False) -> PoolCase:
    """(N, C, H, W) input with N <= 2, C <= 3, H, W <= 6, in any memory layout (transposed,
    sliced out of a NaN-filled storage); kernels up to 3x3, padding at most half the
    kernel, windows that fit; ``stride`` is "maybe", "never" or "always". Distinct values
    (no ties), or with ``small_ints`` integers in [-12, 12]."""
    kh, kw = draw(st.integers(1, 3), label="kh"), draw(st.integers(1, 3), label="kw")
    ph, pw = draw(st.integers(0, kh // 2), label="ph"), draw(st.integers(0, kw // 2), label="pw")
    height = draw(st.integers(max(1, kh - 2 * ph), 6), label="H")
    width = draw(st.integers(max(1, kw - 2 * pw), 6), label="W")
    n, c = draw(st.integers(1, 2), label="N"), draw(st.integers(1, 3), label="C")
    use_stride = stride == "always" or (stride == "maybe"
                                        and draw(st.booleans(), label="stride given"))
    if use_stride:
        sh, sw = draw(st.integers(1, 3), label="sh"), draw(st.integers(1, 3), label="sw")
        stride_arg = int_or_pair(draw, sh, sw, "stride")
    else:
        stride_arg = None
    x = (draw(int_tensors((n, c, height, width), -12, 12), label="x").to(dtype) if small_ints
         else distinct_values((n, c, height, width), dtype))
    return PoolCase(draw(any_layout(x, VALUE_LAYOUTS, label="x")),
                    int_or_pair(draw, kh, kw, "kernel"), stride_arg,
                    int_or_pair(draw, ph, pw, "padding"),
                    spelled=draw(st.booleans(), label="defaults spelled out"))


# ------------------------------------------------------------------ helpers

def ordinary(impl, case: PoolCase, mode: str, why: str):
    """An anchor: pool2d of a valid case equals PyTorch's pooling."""
    return anchored(lambda: impl.pool2d(copy_in_layout(case.x), mode=mode, **case.kwargs()),
                    lambda: case.expected(mode),
                    what=f"pool2d(mode={mode!r}, {case.kwargs()}) of an input of shape "
                         f"{tuple(case.x.shape)} vs F.{mode}_pool2d ({why})")


def as_tensor(got: Any) -> torch.Tensor:
    """The student's result, checked to be a tensor before tensor-only checks."""
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"pool2d returned {type(got).__name__}, not a tensor")
    return got


def check_pool_on_device(pool2d, case: PoolCase, mode: str, dtype: torch.dtype,
                         device: str) -> None:
    """Pool ``dtype`` input on ``device``: the result stays there, in ``dtype``, and
    matches PyTorch's float64 pooling of the same (rounded) values on the CPU."""
    low = case.x.to(dtype)
    expected = case.expected(mode, low.double())
    got = as_tensor(pool2d(low.to(device), mode=mode, **case.kwargs()))
    assert got.dtype == dtype and got.device.type == device, (
        f"pool2d returned {got.dtype} on {got.device}; expected {dtype} on {device}, like x")
    assert_same(got.double().cpu(), expected, what=f"{mode} pooling in {dtype} on {device} vs "
                                                   "float64 on the CPU", **GPU_TOLERANCE[dtype])


# ------------------------------------------------------------------ properties

# The spec's examples: a (1, 1, 2, 4) x, pooled 2x2, and -x with a (1, 2) kernel, stride 1
# and padding (0, 1), where the padding never wins a max.
SPEC_X = torch.tensor([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]])


@pytest.mark.weight(3)
@settings(max_examples=40)
@example(PoolCase(SPEC_X, 2, None, 0, spelled=False))
@example(PoolCase(-SPEC_X, (1, 2), 1, (0, 1), spelled=False))
@given(pool_cases())
def test_max_pool_matches_f_max_pool2d(impl, case):
    got = impl.pool2d(copy_in_layout(case.x), **case.mode("max"), **case.kwargs())
    assert_same(got, case.expected("max"),
                what=f"pool2d({', '.join(f'{k}={v!r}' for k, v in {**case.mode('max'), **case.kwargs()}.items())}) "
                     "vs F.max_pool2d")


@pytest.mark.weight(3)
@settings(max_examples=40)
@example(PoolCase(SPEC_X, 2, None, 0, spelled=False))  # the spec's example: [[[[3.5, 5.5]]]]
@given(pool_cases())
def test_avg_pool_matches_f_avg_pool2d(impl, case):
    got = impl.pool2d(copy_in_layout(case.x), mode="avg", **case.kwargs())
    assert_same(got, case.expected("avg"),
                what="pool2d(mode='avg') vs F.avg_pool2d (padding counts as zeros, "
                     "divide by kh * kw)")


@settings(max_examples=20)
@given(pool_cases(stride="never"), st.sampled_from(["max", "avg"]))
def test_stride_defaults_to_kernel(impl, case, mode):
    got = impl.pool2d(copy_in_layout(case.x), mode=mode, **case.kwargs())
    assert_same(got, case.expected(mode),
                what=f"pool2d(mode={mode!r}) without a stride (stride=None means stride = kernel)")


@settings(max_examples=20)
@given(pool_cases(stride="always", dtype=torch.float32), st.sampled_from(["max", "avg"]))
def test_keeps_float32(impl, case, mode):
    got = impl.pool2d(copy_in_layout(case.x), mode=mode, **case.kwargs())
    assert_same(got, case.expected(mode), what=f"pool2d(mode={mode!r}) of a float32 input")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(st.sampled_from([torch.float16, torch.bfloat16]).flatmap(
    lambda dtype: pool_cases(dtype=dtype, small_ints=True)), st.sampled_from(["max", "avg"]))
def test_half_precision_on_cpu_keeps_the_dtype(impl, case, mode):
    """float16 and bfloat16 pool on the CPU too: the result keeps the dtype and matches
    float64 pooling of the same values (only the average's division rounds)."""
    dtype = case.x.dtype
    got = as_tensor(impl.pool2d(copy_in_layout(case.x), mode=mode, **case.kwargs()))
    assert got.dtype == dtype, (f"pool2d(mode={mode!r}) of a {dtype} input returned {got.dtype}; "
                                "expected the input's dtype")
    assert_same(got.double(), case.expected(mode, case.x.double()),
                what=f"pool2d(mode={mode!r}) in {dtype} vs float64 on the CPU",
                **CPU_HALF_TOLERANCE[dtype])


@settings(max_examples=20)
@example(PoolCase(torch.arange(8.).reshape(1, 2, 2, 2), 1, None, 0), "max", True)
@given(pool_cases(), st.sampled_from(["max", "avg"]), st.booleans())
def test_result_shares_no_memory_with_x(impl, case, mode, one_by_one):
    """A new tensor, even for a 1x1 window with stride 1 (the result equals x)."""
    if one_by_one:
        case = PoolCase(case.x, 1, None, 0)
    x = copy_in_layout(case.x)
    got = impl.pool2d(x, mode=mode, **case.kwargs())
    assert_no_shared_memory(got, x, what=f"pool2d(x, mode={mode!r}, {case.kwargs()})")
    assert_ordinary(lambda: got, lambda: case.expected(mode), what=f"pool2d(mode={mode!r}) vs F.{mode}_pool2d")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(pool_cases(), st.sampled_from(["max", "avg"]))
def test_gradients_match_torch(impl, case, mode):
    """No ties in the input, so max pooling's gradient is unambiguous."""

    def grad_of(pool) -> torch.Tensor:
        x = copy_in_layout(case.x).requires_grad_()
        out = as_tensor(pool(x))
        if not out.requires_grad:
            raise AssertionError("the output is detached from x: backward cannot reach x "
                                 "(no .item(), .detach() or torch.no_grad in pool2d)")
        manual_seed(1)
        (out * random_weights(out)).sum().backward()
        if x.grad is None:
            raise AssertionError("no gradient reaches x: keep the computation in the graph")
        return x.grad

    expected = grad_of(lambda x: case.expected(mode, x))
    got = grad_of(lambda x: impl.pool2d(x, mode=mode, **case.kwargs()))
    assert_same(got, expected, what=f"gradient w.r.t. x of a weighted sum of "
                                    f"pool2d(mode={mode!r}) vs F.{mode}_pool2d's")


@settings(max_examples=20)
@given(pool_cases(), st.sampled_from(["h", "w"]), st.integers(1, 2), st.sampled_from(["max", "avg"]))
def test_padding_over_half_the_kernel_raises_value_error(impl, case, side, excess, mode):
    kh, kw = (case.kernel, case.kernel) if isinstance(case.kernel, int) else case.kernel
    ph, pw = (case.padding, case.padding) if isinstance(case.padding, int) else case.padding
    padding = (kh // 2 + excess, pw) if side == "h" else (ph, kw // 2 + excess)
    kwargs = dict(case.kwargs(), padding=padding)
    with ordinary(impl, case, mode, "the same case with its valid padding"):
        with expect_raises(ValueError, when=f"padding {padding} is more than half the kernel "
                                            f"{(kh, kw)} (F.{mode}_pool2d refuses it too)"):
            impl.pool2d(copy_in_layout(case.x), mode=mode, **kwargs)


@st.composite
def windows_that_do_not_fit(draw) -> tuple[int, int, tuple[int, ...]]:
    """(kernel, padding, shape): a square ``kernel`` window and an int ``padding`` of at most
    half of it (so the padding alone is valid) on a (1, 1, ., .) input whose H or W is too
    short even with the padding on both sides (``size + 2 * padding < kernel``); the other
    side fits."""
    kernel = draw(st.integers(2, 6), label="kernel")
    padding = draw(st.integers(0, (kernel - 2) // 2), label="padding")
    size = max(1, kernel - 2 * padding - draw(st.integers(1, 3), label="short by"))
    side = draw(st.sampled_from(("h", "w")), label="the short side")
    return kernel, padding, (1, 1, size, kernel) if side == "h" else (1, 1, kernel, size)


@settings(max_examples=20)
@example((4, 1, (1, 1, 1, 4)), "max", PoolCase(SPEC_X, 2, None, 0))  # one row, padded to 3, under 4
@given(windows_that_do_not_fit(), st.sampled_from(["max", "avg"]), pool_cases())
def test_window_larger_than_input_raises_value_error(impl, window, mode, case):
    """Also with padding: the window must fit the PADDED input (H + 2 * ph >= kh)."""
    kernel, padding, shape = window
    given_padding = {"padding": padding} if padding else {}
    with ordinary(impl, case, mode, "beside the window that does not fit"):
        with expect_raises(ValueError, when=f"the {kernel}x{kernel} window does not fit an "
                                            f"input of shape {shape} padded by {padding} on "
                                            "each side"):
            impl.pool2d(torch.zeros(shape), kernel, mode=mode, **given_padding)


@settings(max_examples=20)
@given(st.sampled_from(["min", "mean", "average", "MAX", "sum"]), pool_cases(),
       st.sampled_from(["max", "avg"]))
def test_unknown_mode_raises_value_error(impl, mode, case, known):
    with ordinary(impl, case, known, "beside the unknown mode"):
        with expect_raises(ValueError, when=f"mode is {mode!r} (only 'max' and 'avg' exist)"):
            impl.pool2d(torch.zeros(1, 1, 2, 2), 2, mode=mode)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=25)
@given(pool_cases(), st.sampled_from(["max", "avg"]),
       st.sampled_from([torch.float32, torch.float16, torch.bfloat16]))
def test_reduced_precision_on_gpu(impl, case, mode, dtype):
    check_pool_on_device(impl.pool2d, case, mode, dtype, "cuda")
