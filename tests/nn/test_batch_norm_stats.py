"""BatchNorm by hand: the training forward (batch statistics, running buffers updated in
place: unbiased variance, momentum, momentum=None's cumulative average) and the evaluation
forward, against F.batch_norm and nn.BatchNorm's buffers."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same, expect_raises
from tests.numerics import float32_on_device_and_float64_oracle, manual_seed, random_weights
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, sampled

_BY_HAND = ("compute the per-channel mean and biased variance over every dim but 1, normalise "
            "with torch.sqrt(var + eps), and update the buffers in place yourself")

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.batch_norm": _BY_HAND,
    "torch.batch_norm": _BY_HAND,
    "nn.BatchNorm1d": _BY_HAND,
    "nn.BatchNorm2d": _BY_HAND,
    "nn.BatchNorm3d": _BY_HAND,
    "nn.functional.instance_norm": _BY_HAND,
    # the capability: every normalisation layer computes these statistics (group_norm of
    # x.transpose(0, 1) with one group, layer_norm over every dim but the channel)
    "torch.instance_norm": _BY_HAND,
    "nn.InstanceNorm1d": _BY_HAND,
    "nn.InstanceNorm2d": _BY_HAND,
    "nn.InstanceNorm3d": _BY_HAND,
    "F.group_norm": _BY_HAND,
    "torch.group_norm": _BY_HAND,
    "nn.GroupNorm": _BY_HAND,
    "F.layer_norm": _BY_HAND,
    "torch.layer_norm": _BY_HAND,
    "nn.LayerNorm": _BY_HAND,
}, mutates={"batch_norm_train": ("tensors",)})

DEFAULT_MOMENTUM, DEFAULT_EPS = 0.1, 1e-5
# float32 against the float64 truth: x - mean of a nearly constant channel around 5 is only
# known to ~5e-7 (one float32 ulp), and dividing by sqrt(eps = 1e-5) multiplies that by ~316
# (then by |weight| <= 2): ~3e-4, hence atol 1e-3 (as in the layer-norm drill).
FLOAT32_TOLERANCE = dict(rtol=1e-4, atol=1e-3)
CPU_TOLERANCE = {torch.float32: FLOAT32_TOLERANCE}


# ------------------------------------------------------------------ cases

@dataclass
class Case:
    x: torch.Tensor
    running_mean: torch.Tensor
    running_var: torch.Tensor
    num_batches_tracked: torch.Tensor
    weight: torch.Tensor | None
    bias: torch.Tensor | None
    momentum: float | None
    eps: float
    # Whether a call spells out the arguments equal to their defaults or leaves them out.
    spelled: bool = True

    def buffers(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.running_mean.clone(), self.running_var.clone(), self.num_batches_tracked.clone()

    def optional(self, names: tuple[str, ...]) -> dict:
        values = {"weight": self.weight, "bias": self.bias, "momentum": self.momentum, "eps": self.eps}
        defaults = {"weight": None, "bias": None, "momentum": DEFAULT_MOMENTUM, "eps": DEFAULT_EPS}
        given = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in values.items() if k in names}
        if self.spelled:
            return given
        return {k: v for k, v in given.items()
                if not (v is None and defaults[k] is None) and not (defaults[k] is not None and v == defaults[k])}

    def train(self, fn, buffers=None):
        """``batch_norm_train`` on a copy of x and the given (else fresh copies of the) buffers."""
        rm, rv, nbt = buffers if buffers is not None else self.buffers()
        return fn(self.x.clone(), rm, rv, nbt, **self.optional(("weight", "bias", "momentum", "eps")))

    def evaluate(self, fn):
        rm, rv, _ = self.buffers()
        return fn(self.x.clone(), rm, rv, **self.optional(("weight", "bias", "eps")))

    def expected_train(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """F.batch_norm(training=True) in float64 and the buffers it leaves (momentum=None:
        the factor 1 / num_batches_tracked, counted after this batch, as nn.BatchNorm does)."""
        nbt = self.num_batches_tracked + 1
        rm, rv = self.running_mean.double().clone(), self.running_var.double().clone()
        factor = 1.0 / float(nbt) if self.momentum is None else self.momentum
        out = F.batch_norm(self.x.double(), rm, rv, *self._affine64(), training=True, momentum=factor,
                           eps=self.eps)
        dtype = self.x.dtype
        return out.to(dtype), rm.to(dtype), rv.to(dtype), nbt

    def expected_eval(self) -> torch.Tensor:
        out = F.batch_norm(self.x.double(), self.running_mean.double(), self.running_var.double(),
                           *self._affine64(), training=False, eps=self.eps)
        return out.to(self.x.dtype)

    def _affine64(self):
        return tuple(None if t is None else t.double() for t in (self.weight, self.bias))

    def per_channel(self) -> int:
        return self.x.numel() // self.x.shape[1]

    def text(self) -> str:
        return (f"x of shape {list(self.x.shape)} ({self.per_channel()} values per channel), "
                f"momentum={self.momentum}, eps={self.eps}, num_batches_tracked="
                f"{int(self.num_batches_tracked)}, weight {'given' if self.weight is not None else 'None'}, "
                f"bias {'given' if self.bias is not None else 'None'}"
                + ("" if self.spelled else "; arguments equal to their defaults left out"))

    def tolerance(self) -> dict:
        return CPU_TOLERANCE.get(self.x.dtype, {})


SPATIAL = st.sampled_from([(), (3,), (2, 2), (1,), (3, 1)])
MOMENTA = st.sampled_from([0.1, 0.1, None, 0.5, 0.01, 1.0])
EPSILONS = st.sampled_from([1e-5, 1e-5, 1e-3, 0.5])


@st.composite
def cases(draw, min_n: int = 2, max_batch: int = 4, momenta=MOMENTA, dtypes=(torch.float64, torch.float32),
          spatial=SPATIAL) -> Case:
    dtype = draw(sampled(tuple(dtypes)), label="dtype")
    c = draw(st.integers(1, 3), label="C")
    rest = draw(spatial, label="spatial dims")
    per_sample = 1
    for s in rest:
        per_sample *= s
    n = draw(st.integers(max(1, -(-min_n // per_sample)), max_batch), label="N")
    x = draw(float_tensors((n, c, *rest), dtype=dtype, low=-5, high=5), label="x")
    rm = draw(float_tensors((c,), dtype=dtype, low=-2, high=2), label="running_mean")
    rv = draw(float_tensors((c,), dtype=dtype, low=0.125, high=3), label="running_var")
    nbt = torch.tensor(draw(st.one_of(st.just(0), st.integers(0, 9)), label="num_batches_tracked"))
    weight = draw(float_tensors((c,), dtype=dtype, low=-2, high=2), label="weight") \
        if draw(st.booleans(), label="with weight") else None
    bias = draw(float_tensors((c,), dtype=dtype, low=-2, high=2), label="bias") \
        if draw(st.booleans(), label="with bias") else None
    return Case(x, rm, rv, nbt, weight, bias, draw(momenta, label="momentum"), draw(EPSILONS, label="eps"),
                spelled=draw(st.booleans(), label="defaults spelled out"))


def ordinary_train(impl, case: Case, why: str):
    return anchored(lambda: case.train(impl.batch_norm_train), lambda: case.expected_train()[0],
                    **case.tolerance(),
                    what=f"batch_norm_train of {case.text()} vs F.batch_norm(training=True) ({why})")


def check_buffers(got: tuple[torch.Tensor, ...], case: Case, when: str) -> None:
    _, rm, rv, nbt = case.expected_train()
    assert_same(got[2], nbt, what=f"num_batches_tracked after the call {when}: one more than before")
    assert_same(got[0], rm, **case.tolerance(),
                what=f"running_mean after the call {when}: (1 - f) * running_mean + f * batch mean")
    assert_same(got[1], rv, **case.tolerance(),
                what=f"running_var after the call {when}: (1 - f) * running_var + f * the batch's "
                     "UNBIASED variance (n - 1)")


# The spec's example: one channel, x = 1, 2, 3, 6, fresh buffers.
SPEC = Case(torch.tensor([[1.0], [2.0], [3.0], [6.0]]), torch.zeros(1), torch.ones(1), torch.tensor(0),
            None, None, 0.1, 1e-5, spelled=False)


# ------------------------------------------------------------------ training

@pytest.mark.weight(3)
@settings(max_examples=40)
@example(SPEC)
@given(cases())
def test_train_output_matches_f_batch_norm(impl, case):
    assert_same(case.train(impl.batch_norm_train), case.expected_train()[0], **case.tolerance(),
                what=f"batch_norm_train's output ({case.text()}): normalised with the batch's mean "
                     "and BIASED variance")


@pytest.mark.weight(3)
@settings(max_examples=40)
@example(SPEC)
@given(cases())
def test_running_statistics_match_f_batch_norm(impl, case):
    buffers = case.buffers()
    out = case.train(impl.batch_norm_train, buffers)
    check_buffers(buffers, case, f"({case.text()})")
    assert_ordinary(lambda: out, lambda: case.expected_train()[0], **case.tolerance(),
                    what=f"the same call's output ({case.text()})")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(cases(max_batch=2, spatial=st.just(()), momenta=st.sampled_from([0.1, 0.5, None])))
def test_running_var_is_unbiased_and_the_normalisation_biased(impl, case):
    """Two or three values per channel, where n and n - 1 differ most."""
    buffers = case.buffers()
    out = case.train(impl.batch_norm_train, buffers)
    assert_same(out, case.expected_train()[0], **case.tolerance(),
                what=f"the output with {case.per_channel()} values per channel ({case.text()}): "
                     "normalise with the biased variance (divide by n)")
    check_buffers(buffers, case, f"with {case.per_channel()} values per channel ({case.text()})")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(cases(momenta=st.just(None), dtypes=(torch.float64,)), st.integers(2, 4), st.data())
def test_momentum_none_is_a_cumulative_average(impl, case, batches, data):
    """Several batches through one set of fresh buffers (mean 0, var 1, counter 0), as
    nn.BatchNorm2d(momentum=None) in training mode updates them: every batch weighted equally."""
    xs = [case.x] + [data.draw(float_tensors(tuple(case.x.shape), low=-5, high=5), label=f"batch {i}")
                     for i in range(1, batches)]
    c = case.x.shape[1]
    rm, rv, nbt = torch.zeros(c, dtype=torch.float64), torch.ones(c, dtype=torch.float64), torch.tensor(0)
    bn = nn.BatchNorm1d(c, momentum=None, eps=case.eps, affine=False).double()
    for i, x in enumerate(xs):
        out = impl.batch_norm_train(x.clone(), rm, rv, nbt, momentum=None, eps=case.eps)
        expected = bn(x.flatten(2) if x.dim() > 3 else x)
        assert_same(out, expected.reshape(x.shape), what=f"the output of batch {i + 1} of {batches} with momentum=None")
    when = f"{batches} batches with momentum=None (running_mean is the plain average of the batch means)"
    assert_same(nbt, bn.num_batches_tracked, what=f"num_batches_tracked after {when}")
    assert_same(rm, bn.running_mean, what=f"running_mean after {when}")
    assert_same(rv, bn.running_var, what=f"running_var after {when}")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(cases(dtypes=(torch.float64,)))
def test_gradients_match_f_batch_norm(impl, case):
    def grads(fn, *, student: bool):
        x = case.x.clone().requires_grad_()
        weight, bias = (None if t is None else t.clone().requires_grad_() for t in (case.weight, case.bias))
        rm, rv, nbt = case.buffers()
        if student:
            out = fn(x, rm, rv, nbt, weight, bias, case.momentum, case.eps)
            if not (isinstance(out, torch.Tensor) and out.requires_grad):
                raise AssertionError("the output is detached from x: backward cannot reach it (no "
                                     ".detach(), no torch.no_grad() around the normalisation)")
        else:
            out = fn(x, rm, rv, weight, bias, training=True, momentum=0.1, eps=case.eps)
        manual_seed(1)
        leaves = [t for t in (x, weight, bias) if t is not None]
        return torch.autograd.grad((out * random_weights(out)).sum(), leaves, allow_unused=True)

    names = [n for n, t in (("x", case.x), ("weight", case.weight), ("bias", case.bias)) if t is not None]
    expected = grads(F.batch_norm, student=False)
    got = grads(impl.batch_norm_train, student=True)
    for name, g, e in zip(names, got, expected):
        if g is None:
            raise AssertionError(f"no gradient reaches {name}: keep it in the graph")
        assert_same(g, e, what=f"gradient of a weighted sum of the output w.r.t. {name} "
                               f"(vs F.batch_norm, {case.text()}): it flows through the batch's "
                               "mean and variance too")


@settings(max_examples=15)
@given(cases())
def test_the_buffers_are_updated_without_tracking_gradients(impl, case):
    """x, weight and bias require grad, as in a training step: the buffers' update must stay
    out of the graph (torch.no_grad()). Updated with autograd on, running_mean and running_var
    would require grad and hold every step's graph alive through them."""
    x = case.x.clone().requires_grad_()
    weight, bias = (None if t is None else t.clone().requires_grad_() for t in (case.weight, case.bias))
    buffers = case.buffers()
    out = impl.batch_norm_train(x, *buffers, weight, bias, case.momentum, case.eps)
    with anchored(lambda: out.detach() if isinstance(out, torch.Tensor) else out,
                  lambda: case.expected_train()[0], **case.tolerance(),
                  what=f"the same call's output ({case.text()})"):
        for name, buffer in zip(("running_mean", "running_var"), buffers):
            assert not buffer.requires_grad, (
                f"{name} requires grad after batch_norm_train with x requiring grad ({case.text()}): "
                "its update was recorded by autograd; update the buffers under torch.no_grad()")


@settings(max_examples=15)
@given(cases(), cases(min_n=1, max_batch=1, spatial=st.just(())))
def test_one_value_per_channel_raises_value_error(impl, case, single):
    """A batch of one sample with no spatial dims has one value per channel: no variance."""
    with ordinary_train(impl, case, "beside the error case"):
        with expect_raises(ValueError, when=f"x has shape {list(single.x.shape)}: one value per channel"):
            single.train(impl.batch_norm_train)


@settings(max_examples=15)
@given(cases())
def test_train_leaves_x_weight_and_bias_alone(impl, case):
    """Only the three buffers may change: x, weight and bias come back as they went in."""
    x = case.x.clone()
    weight, bias = (None if t is None else t.clone() for t in (case.weight, case.bias))
    buffers = case.buffers()
    out = impl.batch_norm_train(x, *buffers, weight, bias, case.momentum, case.eps)
    for name, got, original in (("x", x, case.x), ("weight", weight, case.weight), ("bias", bias, case.bias)):
        if original is not None:
            assert_same(got, original, what=f"{name} after batch_norm_train (only the running buffers "
                                            "and the counter may change)")
    check_buffers(buffers, case, f"({case.text()})")
    assert_ordinary(lambda: out, lambda: case.expected_train()[0], **case.tolerance(),
                    what=f"the same call's output ({case.text()})")


# ------------------------------------------------------------------ evaluation

@pytest.mark.weight(2)
@settings(max_examples=30)
@example(Case(torch.tensor([[3.0]]), torch.tensor([0.3]), torch.tensor([1.3667]), torch.tensor(1),
              None, None, 0.1, 1e-5, spelled=False))
@given(cases(min_n=1))
def test_eval_matches_f_batch_norm_and_changes_nothing(impl, case):
    assert_same(case.evaluate(impl.batch_norm_eval), case.expected_eval(), **case.tolerance(),
                what=f"batch_norm_eval ({case.text()}): normalised with the running statistics")
    assert_arguments_unchanged(impl, what="x and the buffers after batch_norm_eval")


# ------------------------------------------------------------------ on the GPU

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=20)
@given(cases(dtypes=(torch.float64,)))
def test_float32_on_gpu(impl, case):
    """float32 on the GPU (where F.batch_norm runs cuDNN's kernels) against float64 on the CPU,
    the output and the buffers, which must stay on the GPU."""
    rounded = Case(*(None if t is None else (t.float().double() if t.is_floating_point() else t)
                     for t in (case.x, case.running_mean, case.running_var, case.num_batches_tracked,
                               case.weight, case.bias)), case.momentum, case.eps)
    expected, rm64, rv64, nbt = rounded.expected_train()
    buffers = [t.float().cuda() if t.is_floating_point() else t.cuda() for t in rounded.buffers()]

    def train(x, weight, bias):
        return impl.batch_norm_train(x, *buffers, weight, bias, case.momentum, case.eps)

    got, _ = float32_on_device_and_float64_oracle("cuda", train, lambda *t: None,
                                                  [rounded.x, rounded.weight, rounded.bias], {})
    assert isinstance(got, torch.Tensor) and got.device.type == "cuda", "the output must stay on the GPU"
    tol = FLOAT32_TOLERANCE
    assert_same(got.cpu().double(), expected, what=f"float32 output on the GPU ({case.text()})", **tol)
    for name, b, e in (("running_mean", buffers[0], rm64), ("running_var", buffers[1], rv64)):
        assert b.device.type == "cuda", f"{name} moved off the GPU"
        assert_same(b.cpu().double(), e, what=f"float32 {name} on the GPU after the call", **tol)
    assert_same(buffers[2].cpu(), nbt, what="num_batches_tracked after the call")
