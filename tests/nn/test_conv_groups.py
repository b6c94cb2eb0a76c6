"""Grouped and depthwise convolution with 'same' / 'valid' padding and padding modes, equal to nn.Conv2d."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same, expect_raises, is_tuple_of_ints
from tests.numerics import float32_on_device_and_float64_oracle, weighted_grads
from tests.properties import anchored
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, float_tensors, sampled

_INSTEAD = ("pad once with F.pad (its mode for padding_mode), take every window with Tensor.unfold "
            "or F.unfold, and contract each group's channels with its block of the weight (einsum "
            "or matmul)")
# Every convolution entry point: F.conv*, torch.conv* and torch's convolution kernels (the
# depthwise ones included), the nn.Conv* modules (and their lazy and transposed kin, which
# call them), and convolution's backward, which computes a convolution too: the weight's
# gradient is the input correlated with the output's gradient, so with batch and channels
# swapped it gives the forward (torch.nn.grad's conv*_weight, aten::convolution_backward).
_CONVOLUTIONS = sorted({
    *(f"F.{n}" for n in dir(F) if n.startswith("conv")),
    *(f"torch.{n}" for n in dir(torch) if "conv" in n and "convert" not in n and callable(getattr(torch, n))),
    *(f"torch._C._nn.{n}" for n in dir(torch._C._nn) if "conv" in n and "reorder" not in n),
    *(f"nn.{n}" for n in dir(nn) if "Conv" in n),
    "torch.nn.grad", "torch.ops.aten.convolution_backward", "torch.ops.mkldnn._convolution_pointwise",
})
pytestmark = pytest.mark.exercise(points=15, forbid={name: _INSTEAD for name in _CONVOLUTIONS})

MODES = ("zeros", "reflect", "replicate", "circular")
# x, weight and bias are only read: any layout, stride-0 expanded views included.
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
# float32 on the GPU against float64 on the CPU, from the same float32 inputs: at most
# 3 * 4 * 4 products of values below 3.
GPU_TOLERANCE = dict(rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ same_padding

@dataclass
class SameCase:
    kernel_size: int
    dilation: int
    # Whether a call spells out dilation=1 or leaves it out (the default).
    spelled: bool = True

    def call(self, same_padding):
        if self.dilation == 1 and not self.spelled:
            return same_padding(self.kernel_size)
        return same_padding(self.kernel_size, dilation=self.dilation)

    def expected(self) -> tuple[int, int]:
        """The split F.conv1d(padding='same') makes: of every (before, after) adding up to the
        total it needs, the one whose zero-padded valid convolution gives its output."""
        total = self.dilation * (self.kernel_size - 1)
        x = torch.randn(1, 1, total + 4, dtype=torch.float64)
        w = torch.randn(1, 1, self.kernel_size, dtype=torch.float64)
        with warnings.catch_warnings():  # an even kernel's 'same' warns that it copies the input
            warnings.simplefilter("ignore")
            same = F.conv1d(x, w, padding="same", dilation=self.dilation)
        (split,) = [(before, total - before) for before in range(total + 1)
                    if torch.allclose(F.conv1d(F.pad(x, (before, total - before)), w, dilation=self.dilation), same)]
        return split

    def text(self) -> str:
        return (f"same_padding({self.kernel_size}, dilation={self.dilation})"
                + ("" if self.dilation != 1 or self.spelled else " (dilation left out: the default)"))


@st.composite
def same_cases(draw) -> SameCase:
    """Kernels of 1 to 6 taps (even ones half the time), dilation 1 to 3."""
    return SameCase(draw(st.integers(1, 6), label="kernel_size"), draw(st.integers(1, 3), label="dilation"),
                    spelled=draw(st.booleans(), label="defaults spelled out"))


@pytest.mark.weight(2)
@settings(max_examples=30)
# The spec's examples, and an even kernel with an even dilation (an even total: no extra).
@example(SameCase(3, 1, spelled=False))
@example(SameCase(4, 1, spelled=False))
@example(SameCase(2, 3))
@example(SameCase(4, 2))
@given(same_cases())
def test_same_padding_matches_f_conv1d(impl, case):
    got = case.call(impl.same_padding)
    assert is_tuple_of_ints(got) and len(got) == 2, (
        f"{case.text()} returned {got!r}; expected a tuple of two Python ints (before, after)")
    assert_same(got, case.expected(),
                what=f"{case.text()} (the split F.conv1d(padding='same') makes: total "
                     "dilation * (kernel_size - 1), the odd one out after)")


# ------------------------------------------------------------------ conv2d_groups: strategies

@dataclass
class ConvCase:
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None
    stride: int | tuple[int, int]
    padding: int | tuple[int, int] | str
    dilation: int | tuple[int, int]
    groups: int
    padding_mode: str
    # Whether a call spells out the arguments that equal their defaults (stride=1,
    # padding=0, dilation=1, groups=1) or leaves them out, so that every default is exercised.
    spelled: bool = True

    def kwargs(self) -> dict:
        given = dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)
        chosen = {k: v for k, v in given.items() if self.spelled or not is_default(k, v)}
        return {**chosen, "padding_mode": self.padding_mode}

    def clones(self) -> tuple:
        """Fresh copies of x, weight and bias, each in the memory layout drawn for it."""
        return (copy_in_layout(self.x), copy_in_layout(self.weight),
                None if self.bias is None else copy_in_layout(self.bias))

    def call(self, conv2d_groups):
        return conv2d_groups(*self.clones(), **self.kwargs())

    def module(self) -> nn.Conv2d:
        """nn.Conv2d with these settings, its own parameters on the meta device (its
        ``_conv_forward`` takes the case's weight and bias)."""
        c_out, per_group, kh, kw = self.weight.shape
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return nn.Conv2d(per_group * self.groups, c_out, (kh, kw), self.stride, self.padding, self.dilation,
                             self.groups, bias=self.bias is not None, padding_mode=self.padding_mode,
                             device="meta")

    def oracle(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        """nn.Conv2d's forward with these settings on the given tensors (its padding, by
        padding_mode, then F.conv2d)."""
        with warnings.catch_warnings():  # an even kernel's 'same' warns that it copies the input
            warnings.simplefilter("ignore")
            return self.module()._conv_forward(x, weight, bias)

    def expected(self) -> torch.Tensor:
        return self.oracle(self.x, self.weight, self.bias)

    def text(self) -> str:
        return (f"x {list(self.x.shape)}, weight {list(self.weight.shape)}, groups={self.groups}, "
                f"stride={self.stride}, padding={self.padding!r}, dilation={self.dilation}, "
                f"padding_mode={self.padding_mode!r}, bias {'given' if self.bias is not None else 'None'}"
                + ("" if self.spelled else " (arguments equal to their defaults left out)"))


CONV_DEFAULTS = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}


def is_default(name: str, value: object) -> bool:
    """Whether ``value`` means the default (``(1, 1)`` is ``stride=1`` too)."""
    default = CONV_DEFAULTS[name]
    return value == default or (name != "groups" and value == (default, default))


def as_int_or_pair(draw, along_h: int, along_w: int, label: str) -> int | tuple[int, int]:
    """An int where both dims agree and the draw says so, else the pair."""
    if along_h == along_w and draw(st.booleans(), label=f"{label} as one int"):
        return along_h
    return (along_h, along_w)


@st.composite
def conv_cases(draw, groups: str = "any", paddings: tuple[str, ...] = ("ints",),
               modes: tuple[str, ...] = ("zeros",), dtypes=(torch.float64,)) -> ConvCase:
    """A small batch, weight and maybe bias, each in any memory layout (transposed, sliced
    out of a NaN-filled storage, expanded), values in [-3, 3].

    ``groups``: "any" (1 to 3 groups of 1 or 2 input and output channels each) or
    "depthwise" (groups == C_in, 1 or 2 output channels per input channel). ``paddings``, the
    kinds drawn from: "ints" (an int or a pair, 0 to 2, stride 1 or 2), "same" (stride 1)
    or "valid" (stride 1 or 2). Kernels of 1 to 4 taps (even ones half the time), dilation 1 or 2, and
    sides long enough for one window and for the padding modes (reflect needs a padding
    shorter than the side)."""
    n = draw(st.integers(1, 2), label="N")
    if groups == "depthwise":
        g = draw(st.integers(1, 4), label="groups (= C_in)")
        per_group, per_block = 1, draw(st.integers(1, 2), label="output channels per input channel")
    else:
        g = draw(st.integers(1, 3), label="groups")
        per_group = draw(st.integers(1, 2), label="C_in / groups")
        per_block = draw(st.integers(1, 2), label="C_out / groups")
    kind = draw(sampled(paddings), label="padding kind")
    no_padding = kind == "ints" and draw(st.booleans(), label="no padding")
    padding_mode = draw(sampled(modes), label="padding_mode")
    dims = []
    for axis in ("h", "w"):
        k = draw(st.integers(1, 4), label=f"k{axis}")
        d = draw(st.integers(1, 2), label=f"dilation_{axis}")
        span = d * (k - 1) + 1
        if kind == "ints":
            s = draw(st.integers(1, 2), label=f"stride_{axis}")
            p = 0 if no_padding else draw(st.integers(0, 2), label=f"padding_{axis}")
            before = after = p
        elif kind == "valid":
            s, p = draw(st.integers(1, 2), label=f"stride_{axis}"), None
            before = after = 0
        else:  # 'same': stride 1
            s, p = 1, None
            before, after = (span - 1) // 2, span - 1 - (span - 1) // 2
        smallest = max(1, span - before - after, max(before, after) + 1)
        side = draw(st.integers(smallest, smallest + 4), label=axis.upper())
        dims.append((side, k, s, p, d))
    (h, kh, sh, ph, dh), (w, kw, sw, pw, dw) = dims
    padding: int | tuple[int, int] | str = (kind if ph is None else 0 if no_padding
                                            else as_int_or_pair(draw, ph, pw, "padding"))
    dtype = draw(sampled(tuple(dtypes)), label="dtype")

    def tensor(shape: tuple[int, ...], label: str) -> torch.Tensor:
        return draw(any_layout(draw(float_tensors(shape, dtype=dtype, low=-3, high=3), label=label),
                               READ_ONLY_LAYOUTS, label=label))

    x = tensor((n, g * per_group, h, w), "x")
    weight = tensor((g * per_block, per_group, kh, kw), "weight")
    bias = tensor((g * per_block,), "bias") if draw(st.booleans(), label="with bias") else None
    return ConvCase(x, weight, bias, as_int_or_pair(draw, sh, sw, "stride"), padding,
                    as_int_or_pair(draw, dh, dw, "dilation"), g, padding_mode,
                    spelled=draw(st.booleans(), label="defaults spelled out"))


# The spec's examples.
SPEC_GROUPED = ConvCase(torch.ones(1, 4, 5, 5), torch.ones(6, 2, 3, 3), None, 1, 1, 1, 2, "zeros", spelled=False)
SPEC_SAME = ConvCase(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), None, 1, "same", 1, 1, "zeros", spelled=False)
SPEC_MODES = [ConvCase(torch.tensor([[[[1.0, 2.0, 3.0]]]]), torch.ones(1, 1, 1, 3), None, 1, (0, 1), 1, 1, mode,
                       spelled=False) for mode in MODES]


# ------------------------------------------------------------------ conv2d_groups: against nn.Conv2d

@pytest.mark.weight(4)
@settings(max_examples=40)
@example(SPEC_GROUPED)
@given(conv_cases(dtypes=(torch.float64, torch.float32)))
def test_grouped_conv_matches_f_conv2d(impl, case):
    assert_same(case.call(impl.conv2d_groups), case.expected(),
                what=f"conv2d_groups with {case.text()} (vs F.conv2d: block k of the output sees "
                     "block k of the input channels)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(conv_cases(groups="depthwise", paddings=("ints", "same")))
def test_depthwise_conv_matches_f_conv2d(impl, case):
    """groups == C_in: weight (C_in * m, 1, kh, kw), every output channel sees one input channel."""
    assert_same(case.call(impl.conv2d_groups), case.expected(),
                what=f"depthwise conv2d_groups (groups == C_in) with {case.text()} (vs F.conv2d)")


@pytest.mark.weight(3)
@settings(max_examples=35)
@example(SPEC_SAME)
@given(conv_cases(paddings=("same", "valid")))
def test_same_and_valid_padding_match_f_conv2d(impl, case):
    assert_same(case.call(impl.conv2d_groups), case.expected(),
                what=f"conv2d_groups with {case.text()} (vs F.conv2d: 'same' keeps H x W, an odd "
                     "total padding puts the extra row and column at the end)")


@pytest.mark.weight(3)
@settings(max_examples=35)
@example(SPEC_MODES[1])
@example(SPEC_MODES[2])
@example(SPEC_MODES[3])
@given(conv_cases(paddings=("ints", "same", "valid"), modes=MODES[1:]))
def test_padding_modes_match_nn_conv2d(impl, case):
    """reflect, replicate and circular: nn.Conv2d pads x that way (as F.pad does), then
    convolves without padding."""
    assert_same(case.call(impl.conv2d_groups), case.expected(),
                what=f"conv2d_groups with {case.text()} (vs nn.Conv2d: the padding copies x's own "
                     "values, mirrored, repeated or wrapped around)")


@st.composite
def invalid_settings(draw, case: ConvCase) -> tuple[ConvCase, str]:
    """``case`` made invalid one way: a weight that holds every input channel (groups > 1),
    groups that do not divide the output channels, a bad padding string, 'same' with a
    stride, or a padding_mode nn.Conv2d does not know."""
    hows = ["same with a stride", "padding string", "padding_mode constant"]
    if case.groups > 1:
        hows += ["weight holds every input channel", "groups do not divide C_out"]
    how = draw(st.sampled_from(hows), label="how it is invalid")
    if how == "weight holds every input channel":
        weight = case.weight.repeat(1, case.groups, 1, 1)
        return (replace(case, weight=weight, spelled=True),
                f"weight {list(weight.shape)} is (C_out, C_in, kh, kw) with groups={case.groups}: "
                "its second dim must be C_in / groups")
    if how == "groups do not divide C_out":
        weight = torch.cat([case.weight, case.weight[:1]])
        bias = None if case.bias is None else torch.cat([case.bias, case.bias[:1]])
        return (replace(case, weight=weight, bias=bias, spelled=True),
                f"groups={case.groups} does not divide the {weight.shape[0]} output channels")
    if how == "same with a stride":
        return replace(case, padding="same", stride=(1, 2), spelled=True), "padding='same' with stride (1, 2)"
    if how == "padding string":
        return replace(case, padding="full", spelled=True), "padding='full' (neither 'same' nor 'valid')"
    return (replace(case, padding_mode="constant"),
            "padding_mode='constant' (F.pad's name for zeros, not one of nn.Conv2d's modes)")


@settings(max_examples=25)
@given(conv_cases(paddings=("ints", "same", "valid"), modes=MODES), st.data())
def test_invalid_settings_raise_value_error(impl, case, data):
    bad, when = data.draw(invalid_settings(case))
    with anchored(lambda: case.call(impl.conv2d_groups), case.expected,
                  what=f"conv2d_groups with {case.text()} (the valid settings beside the error case)"):
        with expect_raises(ValueError, when=when):
            bad.call(impl.conv2d_groups)


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(conv_cases(paddings=("ints", "same", "valid"), modes=MODES))
def test_gradients_match_nn_conv2d(impl, case):
    """Gradients reach x, weight and bias as through nn.Conv2d (a mirrored border pixel
    collects the gradient of its copies too)."""
    def leaves() -> list[torch.Tensor | None]:
        return [None if t is None else t.requires_grad_() for t in case.clones()]

    kwargs = case.kwargs()
    expected = weighted_grads(case.oracle, leaves())
    got = weighted_grads(lambda x, w, b: impl.conv2d_groups(x, w, b, **kwargs), leaves(),
                         names="x, weight and bias")
    for name, g, e in zip(("x", "weight", "bias"), got, expected):
        assert g is not None, f"no gradient reaches {name}: keep it in the graph"
        assert_same(g, e, what=f"gradient w.r.t. {name} of a weighted sum of the output, with {case.text()}")


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(conv_cases(paddings=("ints", "same", "valid"), modes=MODES))
def test_float32_on_gpu_matches_float64(impl, case):
    kwargs = case.kwargs()
    got, expected = float32_on_device_and_float64_oracle(
        "cuda", lambda x, w, b: impl.conv2d_groups(x, w, b, **kwargs), case.oracle, case.clones(), {})
    assert isinstance(got, torch.Tensor), f"conv2d_groups returned {type(got).__name__}, not a tensor"
    assert got.dtype == torch.float32 and got.device.type == "cuda", (
        f"the output is {got.dtype} on {got.device}; expected float32 on cuda, like the inputs")
    assert_same(got.cpu().double(), expected,
                what=f"float32 conv2d_groups on cuda with {case.text()} (vs float64 nn.Conv2d on the CPU)",
                **GPU_TOLERANCE)
