"""Conv and transposed-conv output sizes (as nn.Conv2d / nn.ConvTranspose2d give them) and receptive fields."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same, expect_raises
from tests.properties import anchored

# Pure integer arithmetic: nothing a GPU would change, so no cuda test here.
pytestmark = pytest.mark.exercise(points=10)


# ------------------------------------------------------------------ strategies

@dataclass
class Dim:
    """One spatial dimension of a convolution: its input size and the layer's arguments."""

    n: int
    kernel: int
    stride: int = 1
    padding: int = 0
    dilation: int = 1
    output_padding: int = 0  # transposed convolutions only
    # Whether a call spells out the arguments that equal their defaults or leaves them
    # out (so that every default is exercised).
    spelled: bool = True

    @property
    def span(self) -> int:
        return self.dilation * (self.kernel - 1) + 1

    def conv_kwargs(self) -> dict[str, int]:
        return self._given(stride=self.stride, padding=self.padding, dilation=self.dilation)

    def transpose_kwargs(self) -> dict[str, int]:
        return dict(self.conv_kwargs(), **self._given(output_padding=self.output_padding))

    def _given(self, **kwargs: int) -> dict[str, int]:
        return {k: v for k, v in kwargs.items() if self.spelled or v != DEFAULTS[k]}


# The defaults of conv_output_size and conv_transpose_output_size (nn.Conv2d's).
DEFAULTS = {"stride": 1, "padding": 0, "dilation": 1, "output_padding": 0}


@st.composite
def conv_dims(draw, fits: bool = True) -> Dim:
    """Conv arguments where the (dilated) kernel fits the padded input at least once,
    or, with ``fits=False``, where it does not."""
    kernel = draw(st.integers(1 if fits else 2, 5), label="kernel")
    dilation = draw(st.integers(1, 3), label="dilation")
    stride = draw(st.integers(1, 3), label="stride")
    span = dilation * (kernel - 1) + 1
    if fits:
        padding = draw(st.integers(0, 3), label="padding")
        low = max(1, span - 2 * padding)
        n = draw(st.integers(low, low + 8), label="n")
    else:  # n + 2 * padding < span with n >= 1
        padding = draw(st.integers(0, (span - 2) // 2), label="padding")
        n = draw(st.integers(1, span - 2 * padding - 1), label="n")
    return Dim(n, kernel, stride, padding, dilation, spelled=draw(st.booleans(), label="defaults spelled out"))


@st.composite
def transpose_dims(draw, kind: str = "valid") -> Dim:
    """Transposed-conv arguments: ``valid``, ``output_padding`` too large (at least both
    stride and dilation), or ``empty`` (so much padding that no output is left)."""
    n = draw(st.integers(1, 8), label="n")
    kernel = draw(st.integers(1, 5), label="kernel")
    dilation = draw(st.integers(1, 3), label="dilation")
    stride = draw(st.integers(1, 3), label="stride")
    span = dilation * (kernel - 1) + 1
    limit = max(stride, dilation)  # output_padding must be below stride or dilation
    if kind == "output_padding":
        output_padding = draw(st.integers(limit, limit + 2), label="output_padding")
    else:
        output_padding = draw(st.integers(0, limit - 1), label="output_padding")
    most = ((n - 1) * stride + span + output_padding - 1) // 2  # padding leaving >= 1 output
    if kind == "empty":
        padding = draw(st.integers(most + 1, most + 2), label="padding")
    else:
        padding = draw(st.integers(0, min(most, 3)), label="padding")
    return Dim(n, kernel, stride, padding, dilation, output_padding,
               spelled=draw(st.booleans(), label="defaults spelled out"))


layer_lists = st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3)), max_size=4)


# ------------------------------------------------------------------ oracles

def conv2d_output_hw(h: Dim, w: Dim) -> tuple[int, int]:
    """(H_out, W_out) of a real nn.Conv2d with these per-dimension arguments."""
    conv = nn.Conv2d(1, 1, (h.kernel, w.kernel), stride=(h.stride, w.stride),
                     padding=(h.padding, w.padding), dilation=(h.dilation, w.dilation),
                     bias=False)
    with torch.no_grad():
        out = conv(torch.zeros(1, 1, h.n, w.n))
    return tuple(out.shape[-2:])


def conv_transpose2d_output_hw(h: Dim, w: Dim) -> tuple[int, int]:
    """(H_out, W_out) of a real nn.ConvTranspose2d with these per-dimension arguments."""
    conv = nn.ConvTranspose2d(1, 1, (h.kernel, w.kernel), stride=(h.stride, w.stride),
                              padding=(h.padding, w.padding),
                              output_padding=(h.output_padding, w.output_padding),
                              dilation=(h.dilation, w.dilation), bias=False)
    with torch.no_grad():
        out = conv(torch.zeros(1, 1, h.n, w.n))
    return tuple(out.shape[-2:])


def torch_refuses(build_and_run) -> bool:
    try:
        build_and_run()
    except RuntimeError:
        return True
    return False


def receptive_field_by_gradient(layers: list[tuple[int, int]]) -> int:
    """Run a stack of all-ones Conv1d layers and measure which inputs reach output 0:
    the span from the first to the last input with a non-zero gradient."""
    strides = math.prod(s for _, s in layers)
    n = 1 + sum(k - 1 for k, _ in layers) * strides  # at least the field: output 0 exists
    x = torch.zeros(1, 1, n, dtype=torch.float64, requires_grad=True)
    y = x
    for kernel, stride in layers:
        y = F.conv1d(y, torch.ones(1, 1, kernel, dtype=torch.float64), stride=stride)
    y[0, 0, 0].backward()
    reached = x.grad[0, 0].nonzero()
    return int(reached.max() - reached.min()) + 1


def ordinary_conv(impl, dim: Dim, why: str):
    """An anchor: conv_output_size of a fitting case equals nn.Conv2d's output size."""
    return anchored(lambda: impl.conv_output_size(dim.n, dim.kernel, **dim.conv_kwargs()),
                    lambda: conv2d_output_hw(dim, Dim(1, 1))[0],
                    what=f"conv_output_size({dim.n}, kernel={dim.kernel}, {dim.conv_kwargs()}) "
                         f"vs nn.Conv2d ({why})")


def ordinary_transpose(impl, dim: Dim, why: str):
    """An anchor: conv_transpose_output_size of a valid case equals nn.ConvTranspose2d's."""
    return anchored(lambda: impl.conv_transpose_output_size(dim.n, dim.kernel,
                                                            **dim.transpose_kwargs()),
                    lambda: conv_transpose2d_output_hw(dim, Dim(1, 1))[0],
                    what=f"conv_transpose_output_size({dim.n}, kernel={dim.kernel}, "
                         f"{dim.transpose_kwargs()}) vs nn.ConvTranspose2d ({why})")


# ------------------------------------------------------------------ conv_output_size

@pytest.mark.weight(3)
@settings(max_examples=40)
# The spec's examples: conv_output_size(7, kernel=3) is 5, with stride=2, padding=1 it is 4,
# with dilation=2 it is 3.
@example(Dim(7, 3, spelled=False), Dim(7, 3, stride=2, padding=1, spelled=False))
@example(Dim(7, 3, dilation=2, spelled=False), Dim(7, 3, dilation=2, spelled=True))
@given(conv_dims(), conv_dims())
def test_conv_output_size_matches_conv2d(impl, h, w):
    expected = conv2d_output_hw(h, w)
    got = (impl.conv_output_size(h.n, h.kernel, **h.conv_kwargs()),
           impl.conv_output_size(w.n, w.kernel, **w.conv_kwargs()))
    assert_same(got, expected, what="(conv_output_size for H, for W) vs nn.Conv2d's output "
                                    "(H_out, W_out)")


@settings(max_examples=20)
@given(conv_dims(fits=False), conv_dims())
def test_conv_output_size_raises_when_kernel_does_not_fit(impl, dim, fitting):
    assert torch_refuses(lambda: conv2d_output_hw(dim, Dim(1, 1))), "nn.Conv2d accepted it"
    with ordinary_conv(impl, fitting, "beside the case that does not fit"):
        with expect_raises(ValueError, when=f"the kernel spans {dim.span} positions but the "
                                            f"padded input has {dim.n + 2 * dim.padding} "
                                            "(nn.Conv2d raises here)"):
            impl.conv_output_size(dim.n, dim.kernel, **dim.conv_kwargs())


# ------------------------------------------------------------------ conv_transpose_output_size

@pytest.mark.weight(3)
@settings(max_examples=40)
# output_padding may reach the stride when it stays below the dilation, and the other way
@example(Dim(4, 3, stride=1, padding=1, dilation=3, output_padding=2),
         Dim(3, 2, stride=3, padding=0, dilation=1, output_padding=2))
# The spec's examples: 7, and 8 with output_padding=1.
@example(Dim(4, 3, stride=2, padding=1, spelled=False),
         Dim(4, 3, stride=2, padding=1, output_padding=1, spelled=False))
@given(transpose_dims(), transpose_dims())
def test_conv_transpose_output_size_matches_conv_transpose2d(impl, h, w):
    expected = conv_transpose2d_output_hw(h, w)
    got = (impl.conv_transpose_output_size(h.n, h.kernel, **h.transpose_kwargs()),
           impl.conv_transpose_output_size(w.n, w.kernel, **w.transpose_kwargs()))
    assert_same(got, expected, what="(conv_transpose_output_size for H, for W) vs "
                                    "nn.ConvTranspose2d's output (H_out, W_out)")


@settings(max_examples=25)
@given(st.sampled_from(["output_padding", "empty"]).flatmap(transpose_dims), transpose_dims())
def test_conv_transpose_output_size_raises_value_error(impl, dim, valid):
    assert torch_refuses(lambda: conv_transpose2d_output_hw(dim, Dim(1, 1))), (
        "nn.ConvTranspose2d accepted it")
    if dim.output_padding >= max(dim.stride, dim.dilation):
        why = (f"output_padding {dim.output_padding} is not smaller than stride {dim.stride} "
               f"or dilation {dim.dilation}")
    else:
        why = f"padding {dim.padding} leaves no output position"
    with ordinary_transpose(impl, valid, "beside the refused case"):
        with expect_raises(ValueError, when=f"{why} (nn.ConvTranspose2d raises here)"):
            impl.conv_transpose_output_size(dim.n, dim.kernel, **dim.transpose_kwargs())


@settings(max_examples=25)
@given(conv_dims())
def test_conv_transpose_undoes_conv_shape(impl, dim):
    """Public invariant: the transposed conv with the same arguments maps the conv's
    output size back to n, with output_padding = the positions the stride skipped."""
    out = impl.conv_output_size(dim.n, dim.kernel, **dim.conv_kwargs())
    expected_out = conv2d_output_hw(dim, Dim(1, 1))[0]
    assert out == expected_out, (f"conv_output_size({dim.n}, kernel={dim.kernel}, "
                                 f"{dim.conv_kwargs()}) = {out!r}; nn.Conv2d gives {expected_out}")
    skipped = (dim.n + 2 * dim.padding - dim.span) % dim.stride
    back = impl.conv_transpose_output_size(out, dim.kernel, output_padding=skipped,
                                           **dim.conv_kwargs())
    assert back == dim.n, (
        f"conv_output_size({dim.n}, ...) = {out}, and conv_transpose_output_size({out}, ..., "
        f"output_padding={skipped}) with the same kernel/stride/padding/dilation gave {back}; "
        f"expected {dim.n} back")


# ------------------------------------------------------------------ receptive_field

@pytest.mark.weight(3)
@settings(max_examples=40)
@example([(3, 1), (3, 1)])  # the spec's examples: 5
@example([(2, 2), (3, 1)])  # and 6
@given(layer_lists)
def test_receptive_field_matches_conv_stack_gradient(impl, layers):
    expected = receptive_field_by_gradient(layers)
    assert_same(impl.receptive_field(list(layers)), expected,
                what=f"receptive_field({layers}) (the span of inputs whose gradient reaches "
                     "output 0 of all-ones Conv1d layers)")
