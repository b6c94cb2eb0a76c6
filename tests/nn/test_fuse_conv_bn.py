"""Fold an eval-mode BatchNorm2d into the Conv2d before it: one new Conv2d, inputs untouched."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same
from tests.numerics import full_float32
from tests.properties import assert_arguments_unchanged, assert_no_shared_memory, assert_ordinary
from tests.strategies import copy_in_layout, float_tensors, relaid

pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.nn.utils.fusion.fuse_conv_bn_eval": "compute scale = gamma / sqrt(running_var + eps) "
                                               "and fold it into a new conv's weight and bias",
    "torch.nn.utils.fusion.fuse_conv_bn_weights": "compute scale = gamma / sqrt(running_var + eps) "
                                                  "and fold it into a new conv's weight and bias",
})

SETTINGS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
            "groups", "padding_mode")

# float32 on the GPU against float64 on the CPU, from the same float32 parameters.
GPU_TOLERANCE = dict(rtol=1e-4, atol=1e-4)

# Half precision on the CPU: each fused parameter is a few operations on rounded values
# (var + eps, sqrt, gamma / ., times the weight; bias - mean, times scale, plus beta),
# so it may be off by a few units of roundoff of the dtype, relative to the size of the
# terms it is made of.
UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}

# Layouts of conv.weight: a model converted with .to(memory_format=torch.channels_last)
# holds its conv weights permuted like this.
WEIGHT_LAYOUTS = ["contiguous", "channels_last", "permuted", "sliced"]


# ------------------------------------------------------------------ cases

@dataclass
class FuseCase:
    """The tensors and settings of a Conv2d + BatchNorm2d pair and an input batch.

    ``modules()`` builds a fresh pair every time, so no run can see another's changes.
    """

    conv_settings: dict[str, Any]
    weight: torch.Tensor
    conv_bias: torch.Tensor | None
    bn_weight: torch.Tensor | None  # None: BatchNorm2d(affine=False)
    bn_bias: torch.Tensor | None
    running_mean: torch.Tensor
    running_var: torch.Tensor
    eps: float
    bn_training: bool  # the mode bn is in when handed over (fusing always means eval)
    x: torch.Tensor

    def modules(self, dtype: torch.dtype = torch.float64,
                device: str = "cpu") -> tuple[nn.Conv2d, nn.BatchNorm2d]:
        channels = self.weight.shape[0]
        conv = nn.Conv2d(**self.conv_settings, bias=self.conv_bias is not None,
                         device=device, dtype=dtype)
        bn = nn.BatchNorm2d(channels, eps=self.eps, affine=self.bn_weight is not None,
                            device=device, dtype=dtype)
        # the weight in the layout drawn for it (self.weight is laid out that way)
        conv.weight = nn.Parameter(copy_in_layout(self.weight, dtype, device))
        with torch.no_grad():
            if self.conv_bias is not None:
                conv.bias.copy_(self.conv_bias)
            if self.bn_weight is not None:
                bn.weight.copy_(self.bn_weight)
                bn.bias.copy_(self.bn_bias)
            bn.running_mean.copy_(self.running_mean)
            bn.running_var.copy_(self.running_var)
        bn.train(self.bn_training)
        return conv, bn

    def expected(self, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """conv then bn in eval mode, in plain PyTorch, on the CPU."""
        conv, bn = self.modules(dtype)
        with torch.no_grad():
            return bn.eval()(conv(self.x.to(dtype)))


def weight_in_layout(weight: torch.Tensor, layout: str, draw) -> torch.Tensor:
    """The conv weight's values in ``layout`` (see WEIGHT_LAYOUTS)."""
    if layout == "channels_last":
        return weight.contiguous(memory_format=torch.channels_last)
    if layout == "permuted":
        order = draw(st.permutations(range(4)).filter(lambda o: o != sorted(o)),
                     label="dim order of conv.weight in memory")
        return relaid(weight, "permuted", order=tuple(order))
    if layout == "sliced":
        return relaid(weight, "sliced", steps=(1, 2, 1, 2), offsets=(1, 0, 1, 0))
    return weight


@st.composite
def fuse_cases(draw) -> FuseCase:
    groups = draw(st.integers(1, 2), label="groups")
    c_in = groups * draw(st.integers(1, 2), label="C_in per group")
    c_out = groups * draw(st.integers(1, 2), label="C_out per group")
    kh, kw = draw(st.integers(1, 3), label="kh"), draw(st.integers(1, 3), label="kw")
    stride, padding = draw(st.integers(1, 2), label="stride"), draw(st.integers(0, 1), label="padding")
    dilation = draw(st.integers(1, 2), label="dilation")
    padding_mode = draw(st.sampled_from(["zeros", "circular"]), label="padding_mode")
    conv_settings = dict(in_channels=c_in, out_channels=c_out, kernel_size=(kh, kw), stride=stride,
                         padding=padding, dilation=dilation, groups=groups, padding_mode=padding_mode)
    smallest = max(1, padding, dilation * (max(kh, kw) - 1) + 1 - 2 * padding)
    h, w = draw(st.integers(smallest, 5), label="H"), draw(st.integers(smallest, 5), label="W")
    values = dict(low=-3, high=3)
    affine = draw(st.booleans(), label="bn affine")
    return FuseCase(
        conv_settings=conv_settings,
        weight=weight_in_layout(draw(float_tensors((c_out, c_in // groups, kh, kw), **values)),
                                draw(st.sampled_from(WEIGHT_LAYOUTS), label="layout of conv.weight"),
                                draw),
        conv_bias=draw(st.none() | float_tensors((c_out,), **values)),
        bn_weight=draw(float_tensors((c_out,), **values)) if affine else None,
        bn_bias=draw(float_tensors((c_out,), **values)) if affine else None,
        running_mean=draw(float_tensors((c_out,), **values)),
        running_var=draw(float_tensors((c_out,), low=0.05, high=4.0)),
        eps=draw(st.sampled_from([1e-5, 1e-3, 0.1, 1.0]), label="eps"),
        bn_training=draw(st.booleans(), label="bn.training"),
        x=draw(float_tensors((draw(st.integers(1, 2), label="N"), c_in, h, w), **values)),
    )


# ------------------------------------------------------------------ helpers

def fused_conv(impl, conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Module:
    fused = impl.fuse_conv_bn(conv, bn)
    assert isinstance(fused, nn.Module), (
        f"fuse_conv_bn returned {type(fused).__name__}; expected a new nn.Conv2d")
    return fused


def run_fused(fused: nn.Module, x: torch.Tensor) -> torch.Tensor:
    try:
        with torch.no_grad():
            return fused(x)
    except RuntimeError as exc:
        kinds = sorted({f"{p.dtype} on {p.device}" for p in fused.parameters()})
        raise AssertionError(f"the fused conv cannot run on a {x.dtype} batch on {x.device} "
                             f"(its parameters are {', '.join(kinds)}): {exc}") from None


def snapshot(module: nn.Module) -> dict[str, Any]:
    return {"training": module.training,
            **{name: t.detach().clone() for name, t in module.state_dict().items()}}


def check_output(fused: nn.Module, case: FuseCase, dtype: torch.dtype = torch.float64) -> None:
    """The fused conv's output equals conv then bn in eval mode (the ordinary comparison
    every property here rides with)."""
    got = run_fused(fused, case.x.to(dtype))
    assert_same(got, case.expected(dtype),
                what=f"fused(x) for {describe_pair(case)}; expected bn.eval()(conv(x))")


def describe_pair(case: FuseCase) -> str:
    s = case.conv_settings
    return (f"conv(stride={s['stride']}, padding={s['padding']}, dilation={s['dilation']}, "
            f"groups={s['groups']}, weight strides {case.weight.stride()}, "
            f"padding_mode={s['padding_mode']!r}, bias "
            f"{'yes' if case.conv_bias is not None else 'no'}), bn(eps={case.eps}, affine="
            f"{case.bn_weight is not None}, training={case.bn_training})")


# ------------------------------------------------------------------ properties

# The spec's example: a 1x1 conv (weight 2, bias 1) and bn(eps=1, mean 1, var 3, weight 4,
# bias 0.5): scale 4 / sqrt(3 + 1) = 2, so the fused weight is 4 and its bias 0.5.
SPEC_CASE = FuseCase(
    conv_settings=dict(in_channels=1, out_channels=1, kernel_size=(1, 1), stride=1, padding=0, dilation=1,
                       groups=1, padding_mode="zeros"),
    weight=torch.full((1, 1, 1, 1), 2.0, dtype=torch.float64), conv_bias=torch.tensor([1.0], dtype=torch.float64),
    bn_weight=torch.tensor([4.0], dtype=torch.float64), bn_bias=torch.tensor([0.5], dtype=torch.float64),
    running_mean=torch.tensor([1.0], dtype=torch.float64), running_var=torch.tensor([3.0], dtype=torch.float64),
    eps=1.0, bn_training=True, x=torch.tensor([[[[-1.0, 0.0], [1.0, 2.5]]]], dtype=torch.float64))


@pytest.mark.weight(4)
@settings(max_examples=50)
@example(SPEC_CASE)
@given(fuse_cases())
def test_fused_output_equals_conv_then_bn_eval(impl, case):
    fused = fused_conv(impl, *case.modules())
    got = run_fused(fused, case.x.clone())
    assert_same(got, case.expected(),
                what=f"fused(x) for {describe_pair(case)}; expected bn.eval()(conv(x))")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(fuse_cases())
def test_returns_a_new_conv2d_with_the_same_settings(impl, case):
    conv, bn = case.modules()
    fused = fused_conv(impl, conv, bn)
    assert type(fused) is nn.Conv2d, f"fuse_conv_bn returned a {type(fused).__name__}, not an nn.Conv2d"
    assert fused is not conv, "fuse_conv_bn returned the conv it was given; build a new nn.Conv2d"
    for name in SETTINGS:
        assert getattr(fused, name) == getattr(conv, name), (
            f"the fused conv has {name}={getattr(fused, name)!r}, the original "
            f"{getattr(conv, name)!r}: copy every setting of the conv")
    assert fused.bias is not None, (
        "the fused conv has no bias: it needs one (beta - mean * scale, plus the scaled conv "
        "bias), even when the original conv had none")
    check_output(fused, case)


@settings(max_examples=20)
@given(fuse_cases())
def test_keeps_dtype_and_device(impl, case):
    conv, bn = case.modules()
    fused = fused_conv(impl, conv, bn)
    for name, p in fused.named_parameters():
        assert p.dtype == conv.weight.dtype and p.device == conv.weight.device, (
            f"fused.{name} is {p.dtype} on {p.device}; the conv is {conv.weight.dtype} on "
            f"{conv.weight.device} (nn.Conv2d(...) makes float32 CPU weights unless given "
            "dtype= and device=)")
    check_output(fused, case)


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(fuse_cases())
def test_inputs_untouched(impl, case):
    conv, bn = case.modules()
    before = snapshot(conv), snapshot(bn)
    fused = fused_conv(impl, conv, bn)
    assert_arguments_unchanged(impl, what="conv and bn after fuse_conv_bn")
    for which, module, old in (("conv", conv, before[0]), ("bn", bn, before[1])):
        new = snapshot(module)
        assert new["training"] == old["training"], (
            f"{which}.training changed from {old['training']} to {new['training']}: leave the "
            "inputs' modes alone (read the running statistics, do not call .eval() on them)")
        for name, value in old.items():
            if name != "training":
                assert_same(new[name], value,
                            what=f"{which}.{name} after fuse_conv_bn (it must be left unchanged)")
    assert_ordinary(lambda: check_output(fused, case))


def identity_bn(case: FuseCase) -> FuseCase:
    """The case with a batch norm that changes nothing: mean 0, var + eps == 1 exactly,
    gamma 1 and beta 0 (or no affine), so the fused weight equals conv.weight."""
    c_out = case.weight.shape[0]
    affine = case.bn_weight is not None
    return dataclasses.replace(case, eps=0.25, running_mean=torch.zeros(c_out, dtype=torch.float64),
                        running_var=torch.full((c_out,), 0.75, dtype=torch.float64),
                        bn_weight=torch.ones(c_out, dtype=torch.float64) if affine else None,
                        bn_bias=torch.zeros(c_out, dtype=torch.float64) if affine else None)


@settings(max_examples=20)
@given(fuse_cases(), st.booleans())
def test_fused_parameters_share_no_memory_with_the_inputs(impl, case, identity):
    """New tensors for the fused weight and bias, even when bn changes nothing and the
    fused weight equals conv.weight: training the fused conv must not change the original."""
    if identity:
        case = identity_bn(case)
    conv, bn = case.modules()
    fused = fused_conv(impl, conv, bn)
    originals = [*conv.parameters(), *bn.parameters(), *bn.buffers()]
    for name, p in fused.named_parameters():
        assert_no_shared_memory(p, *originals, what=f"fused.{name} for {describe_pair(case)}")
    assert_ordinary(lambda: check_output(fused, case))


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(fuse_cases(), st.sampled_from([torch.float16, torch.bfloat16]))
def test_half_precision_on_cpu_keeps_the_dtype(impl, case, dtype):
    """float16 / bfloat16 modules on the CPU: the fused conv keeps their dtype, and its
    weight and bias are the float64 fold of the same (rounded) values up to a few
    roundings."""
    conv, bn = case.modules(dtype)
    fused = fused_conv(impl, conv, bn)
    for name, p in fused.named_parameters():
        assert p.dtype == dtype, (f"fused.{name} is {p.dtype}; the modules are {dtype} "
                                  "(nn.Conv2d(..., dtype=conv.weight.dtype))")
    assert isinstance(fused.bias, torch.Tensor), "the fused conv has no bias"
    w = conv.weight.detach().double()
    b = conv.bias.detach().double() if conv.bias is not None else torch.zeros(w.shape[0], dtype=torch.float64)
    mean, var = bn.running_mean.double(), bn.running_var.double()
    gamma = bn.weight.detach().double() if bn.weight is not None else torch.ones_like(var)
    beta = bn.bias.detach().double() if bn.bias is not None else torch.zeros_like(var)
    scale = gamma / torch.sqrt(var + bn.eps)
    u = UNIT_ROUNDOFF[dtype]
    assert_same(fused.weight.detach().double(), w * scale.reshape(-1, 1, 1, 1), rtol=6 * u,
                atol=1e-6, what=f"fused.weight in {dtype} vs the float64 fold of the same values")
    size = ((b.abs() + mean.abs()) * scale.abs() + beta.abs()).max().item()
    assert_same(fused.bias.detach().double(), (b - mean) * scale + beta, rtol=6 * u,
                atol=6 * u * size, what=f"fused.bias in {dtype} vs the float64 fold of the same values")


# ------------------------------------------------------------------ GPU

def check_float32_on(device: str, fuse, case: FuseCase) -> None:
    """Fuse float32 modules living on ``device``; the fused conv must stay there in float32
    and match the float64 CPU conv+bn from the same float32-rounded parameters."""
    rounded = copy.deepcopy(case)
    for field in ("weight", "conv_bias", "bn_weight", "bn_bias", "running_mean", "running_var", "x"):
        value = getattr(rounded, field)
        if value is not None:
            setattr(rounded, field, value.float().double())
    expected = rounded.expected()
    fused = fuse(*rounded.modules(torch.float32, device))
    assert isinstance(fused, nn.Module), f"fuse_conv_bn returned {type(fused).__name__}"
    for name, p in fused.named_parameters():
        assert p.dtype == torch.float32 and p.device.type == device, (
            f"fused.{name} is {p.dtype} on {p.device}; expected float32 on {device}, like the conv")
    with full_float32():
        got = run_fused(fused, rounded.x.to(device, torch.float32))
    assert_same(got.cpu().double(), expected,
                what=f"float32 fused conv on {device} for {describe_pair(case)} "
                     "(vs float64 conv + bn on the CPU)", **GPU_TOLERANCE)


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(fuse_cases())
def test_float32_on_gpu_matches_float64(impl, case):
    check_float32_on("cuda", impl.fuse_conv_bn, case)
