"""Cross-entropy from log_softmax with class weights, ignore_index, reductions and label smoothing, equal to F.cross_entropy."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises, wide
from tests.numerics import manual_seed, overflowed, random_weights
from tests.properties import anchored, harder_than
from tests.strategies import float_tensors, int_tensors, layouts, relaid, reusable, sampled, shapes

_BY_HAND = ("take logits.log_softmax(dim=1), pick -logp at the targets with gather, weight, "
            "smooth and reduce yourself")

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.cross_entropy": _BY_HAND,
    "F.nll_loss": _BY_HAND,
    "nn.CrossEntropyLoss": _BY_HAND,
    "nn.NLLLoss": _BY_HAND,
})

REDUCTIONS = ("mean", "sum", "none")
SMOOTHING = (0.05, 0.1, 0.3, 1.0)

# Reduced precision on the GPU against float64 on the CPU (logits and weights
# rounded first). log_softmax rounds its output to the input dtype, so a loss of
# ~10 carries ~2**-8 relative error in bfloat16.
GPU_TOLERANCE = {torch.float32: dict(rtol=1e-4, atol=1e-4),
                 torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}
# The same on the CPU, where torch has float16 and bfloat16 kernels for log_softmax too.
CPU_TOLERANCE = {torch.float16: dict(rtol=1e-2, atol=1e-2),
                 torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}


# ------------------------------------------------------------------ strategies

def _copy(t: torch.Tensor) -> torch.Tensor:
    return t.clone()


@dataclass
class Case:
    logits: torch.Tensor
    target: torch.Tensor
    kwargs: dict[str, Any] = field(default_factory=dict)
    clean_target: torch.Tensor | None = None  # the targets before any was set to ignore_index
    # How each tensor argument is laid out in memory for the student (default: a clone).
    lay: dict[str, Callable[[torch.Tensor], torch.Tensor]] = field(default_factory=dict)

    def student_args(self) -> tuple[tuple, dict[str, Any]]:
        """Fresh copies for one call (the student may change what it is given), each in its
        drawn memory layout."""
        kwargs = {k: self.lay.get(k, _copy)(v) if isinstance(v, torch.Tensor) else v
                  for k, v in self.kwargs.items()}
        return (self.lay.get("logits", _copy)(self.logits),
                self.lay.get("target", _copy)(self.target)), kwargs

    def ordinary(self) -> Case:
        """The same logits and (un-ignored) targets with every option at its default but
        ``reduction="none"``: an ordinary input whose per-position losses are all positive
        when C >= 2, for the oracle comparison that rides along with a corner or error check."""
        target = self.target if self.clean_target is None else self.clean_target
        return Case(self.logits, target, {"reduction": "none"})

    def expected(self) -> torch.Tensor:
        return F.cross_entropy(self.logits, self.target, **self.kwargs)

    def describe(self) -> str:
        shown = {k: ("given" if isinstance(v, torch.Tensor) else v) for k, v in self.kwargs.items()}
        options = ", ".join(f"{k}={v}" for k, v in shown.items()) or "defaults"
        return f"cross_entropy of logits {tuple(self.logits.shape)} ({options})"


@reusable
@st.composite
def ce_cases(draw, spatial: bool = False, weighted: bool = False, ignoring: bool = False,
             smoothing: bool = False, reductions=("mean",), low: float = -10.0,
             high: float = 10.0, min_batch: int = 0, dtype: torch.dtype = torch.float64,
             min_classes: int = 1, laid_out: bool = False) -> Case:
    """Logits (N, C) (or (N, C, d1[, d2]) if ``spatial``), targets, and the options asked for;
    with ``laid_out``, each tensor argument reaches the student in a drawn memory layout
    (transposed/permuted, or a strided view of a NaN-filled storage).

    Shapes and options are drawn before the values: they shrink first."""
    n = draw(st.integers(min_batch, wide(4)), label="N")
    c = draw(st.integers(min_classes, wide(5, official=12)), label="C")
    dims = draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=3), label="d1..dk") if spatial else ()
    kwargs: dict[str, Any] = {}
    if len(reductions) > 1 or reductions[0] != "mean":
        kwargs["reduction"] = draw(sampled(tuple(reductions)), label="reduction")
    if ignoring:
        kwargs["ignore_index"] = draw(sampled((-100, -1, *range(c))), label="ignore_index")
    if smoothing:
        kwargs["label_smoothing"] = draw(sampled(SMOOTHING), label="label_smoothing")
    logits = draw(float_tensors((n, c, *dims), dtype=dtype, low=low, high=high), label="logits")
    target = draw(int_tensors((n, *dims), 0, c - 1), label="target")
    clean = target.clone()
    if ignoring:
        ignored = draw(int_tensors(target.shape, 0, 1), label="ignored positions").bool()
        target[ignored] = kwargs["ignore_index"]
    if weighted:
        # Quarters in [0, 3]: no subnormal weight (its 1 / w is inf). A class may weigh 0; when
        # every kept target's class does, the mean is nan (0 / 0 in the target term).
        quarters = draw(int_tensors((c,), 0, 12), label="weight in quarters")
        kwargs["weight"] = quarters.to(dtype) / 4
    lay = {}
    if laid_out:
        lay = {"logits": draw(layouts(logits.dim(), label="logits"), label="logits layout"),
               "target": draw(layouts(target.dim(), label="target"), label="target layout")}
        if weighted:
            lay["weight"] = draw(layouts(1, label="weight"), label="weight layout")
    return Case(logits, target, kwargs, clean, lay)


def call(impl, case: Case) -> Any:
    args, kwargs = case.student_args()
    return impl.cross_entropy(*args, **kwargs)


def check(impl, case: Case, note: str = "") -> None:
    """The student's loss equals F.cross_entropy's (nan where PyTorch gives 0 / 0)."""
    assert_same(call(impl, case), case.expected(), what=case.describe() + note, equal_nan=True)


def check_beside(impl, case: Case, before: Case, note: str, change: str, advice: str = "") -> None:
    """``check`` of ``case``, a harder form of ``before`` (its logits scaled, its arguments
    laid out in memory), anchored on ``before``: a failure is this property's own only
    where the answer to ``before`` is right. ``advice`` (about an overflow) joins the
    message only where the answer holds inf or nan and F.cross_entropy's is finite."""
    with harder_than(lambda: call(impl, before), before.expected, equal_nan=True,
                     what=before.describe() + f" vs F.cross_entropy ({change})"):
        got, expected = call(impl, case), case.expected()
        assert_same(got, expected, equal_nan=True,
                    what=case.describe() + note + (advice if overflowed(got, expected) else ""))


def on_ordinary_input(impl, case: Case):
    """Rides along with a corner or error check: the loss of ``case``'s own logits and
    targets, every option at its default but ``reduction="none"``, equals F.cross_entropy's."""
    ordinary = case.ordinary()
    return anchored(lambda: call(impl, ordinary), ordinary.expected, equal_nan=True,
                    what=ordinary.describe() + " vs F.cross_entropy (an ordinary input, checked "
                                               "beside the corner case)")


# ------------------------------------------------------------------ against F.cross_entropy

# The spec's examples: two rows of three classes, targets 0 and 2.
SPEC_LOGITS = torch.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]])
SPEC_TARGET = torch.tensor([0, 2])
# Spatial logits (N, C, d1, d2) and targets (N, d1, d2) laid out with their last dims
# swapped in memory: what a .view that flattens the positions refuses.
SPATIAL_PERMUTED = Case(torch.arange(24, dtype=torch.float64).reshape(2, 3, 2, 2).sin(),
                        torch.tensor([[[0, 2], [1, 0]], [[2, 2], [0, 1]]]),
                        lay={"logits": functools.partial(relaid, kind="permuted", order=(0, 1, 3, 2)),
                             "target": functools.partial(relaid, kind="permuted", order=(0, 2, 1))})


@pytest.mark.weight(3)
@settings(max_examples=40)
@example(Case(SPEC_LOGITS, SPEC_TARGET))
@given(ce_cases(min_batch=1))
def test_mean_over_a_batch_matches_f_cross_entropy(impl, case):
    check(impl, case, " vs F.cross_entropy: the mean of -log_softmax(logits)[i, target[i]]")


@pytest.mark.weight(2)
@settings(max_examples=40)
@example(Case(SPEC_LOGITS, SPEC_TARGET, {"reduction": "none"}))
@given(st.booleans().flatmap(lambda spatial: ce_cases(spatial=spatial, reductions=REDUCTIONS)))
def test_reductions_and_extra_dims_match(impl, case):
    check(impl, case, " vs F.cross_entropy (classes are dim 1)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@example(Case(SPEC_LOGITS, SPEC_TARGET, {"weight": torch.tensor([1.0, 1.0, 3.0])}))
@given(ce_cases(spatial=False, weighted=True, reductions=REDUCTIONS))
def test_class_weights_match(impl, case):
    check(impl, case, " vs F.cross_entropy (mean = sum of w[y] * loss / sum of w[y])")


@pytest.mark.weight(2)
@settings(max_examples=40)
@example(Case(SPEC_LOGITS, torch.tensor([0, -100]), clean_target=SPEC_TARGET))  # the default ignore_index
@given(st.booleans().flatmap(lambda spatial: ce_cases(spatial=spatial, ignoring=True,
                                                      reductions=REDUCTIONS)))
def test_ignore_index_matches(impl, case):
    check(impl, case, " vs F.cross_entropy (ignored positions: loss 0, left out of the mean; "
                      "all ignored -> nan mean)")


@pytest.mark.weight(2)
@settings(max_examples=40)
@given(st.tuples(st.booleans(), st.booleans(), st.booleans()).flatmap(
    lambda flags: ce_cases(weighted=flags[0], ignoring=flags[1], spatial=flags[2], smoothing=True,
                           reductions=REDUCTIONS)))
@example(Case(SPEC_LOGITS, SPEC_TARGET, {"label_smoothing": 0.1}))
def test_label_smoothing_matches(impl, case):
    check(impl, case, " vs F.cross_entropy (eps / C on every class, weighted by w[c]; nothing "
                      "at ignored positions)")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(ce_cases(min_batch=1, reductions=REDUCTIONS), st.sampled_from([1e2, 1e3, 1e4]),
       st.sampled_from([-1.0, 1.0]))
def test_large_logits_stay_finite(impl, case, scale, sign):
    """Logits in the hundreds or thousands: exp overflows, softmax(...).log() hits log(0).
    Anchored on the same logits unscaled; the advice only where the loss holds inf or nan."""
    before = replace(case)
    case.logits = case.logits * scale + sign * scale
    check_beside(impl, case, before, f" with logits up to ~{scale:g} in size", "the same logits before scaling",
                 advice=": inf or nan, where exp overflowed or log met 0: use log_softmax or subtract the max")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(st.tuples(st.booleans(), st.booleans()).flatmap(
    lambda flags: ce_cases(min_batch=1, min_classes=2, weighted=flags[0], spatial=flags[1],
                           smoothing=True, reductions=REDUCTIONS)),
       st.sampled_from([1e2, 1e3, 1e4]), st.sampled_from([-1.0, 1.0]))
def test_large_logits_with_label_smoothing_stay_finite(impl, case, scale, sign):
    """The smoothing term sums -logp over EVERY class, the least likely ones included: with
    large logits their softmax is exactly 0 and softmax(...).log() gives -inf there.
    Anchored on the same logits unscaled; the advice only where the loss holds inf or nan."""
    before = replace(case)
    case.logits = case.logits * scale + sign * scale
    check_beside(impl, case, before, f" with logits up to ~{scale:g} in size and label smoothing",
                 "the same logits before scaling",
                 advice=": inf or nan, where exp overflowed or log met 0 (the smoothing term needs log_softmax too)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()).flatmap(
    lambda flags: ce_cases(weighted=flags[0], ignoring=flags[1], spatial=flags[2],
                           smoothing=flags[3], reductions=REDUCTIONS, laid_out=True)))
@example(SPATIAL_PERMUTED)  # every drawn set must meet a .view on a permuted logits and target
def test_any_memory_layout_matches(impl, case):
    """Transposed or permuted logits, targets and weights, and strided views out of a larger
    NaN-filled storage: the same values, so the same loss (no .view on a layout it refuses,
    no reading the storage past the view). Anchored on the same arguments, contiguous: a
    failure is this property's own only where those give the right loss."""
    check_beside(impl, case, replace(case, lay={}),
                 " vs F.cross_entropy, with the arguments in the memory layouts drawn (right when "
                 "they are contiguous: read them through indexing, reshape or movedim, never the "
                 "storage behind a view)", "the same arguments, contiguous")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(st.tuples(st.booleans(), st.booleans()).flatmap(
    lambda flags: ce_cases(min_batch=1, min_classes=2, weighted=True, ignoring=flags[0],
                           spatial=flags[1], smoothing=True)), st.data())
def test_mean_is_nan_when_the_kept_targets_weigh_nothing(impl, case, data):
    """F.cross_entropy normalises the target term and the smoothing term each by W, the sum
    of w[y] over the kept positions: with W = 0 the target term is 0 / 0 = nan, so the mean
    is nan (one division of the summed loss by W would give inf)."""
    weight = case.kwargs["weight"].clone()
    kept = case.target[case.target != case.kwargs.get("ignore_index", -100)]
    weight[kept] = 0
    heavier = data.draw(st.integers(0, len(weight) - 1), label="a class that keeps its weight")
    if not bool((kept == heavier).any()):
        weight[heavier] = 1.0
    corner = Case(case.logits, case.target, {**case.kwargs, "weight": weight})
    with on_ordinary_input(impl, case):
        check(impl, corner, " when every kept target's class has weight 0 (each term of the "
                            "mean is divided by sum of w[y] = 0: nan, as in PyTorch)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(st.tuples(st.booleans(), st.booleans(), st.booleans()).flatmap(
    lambda flags: ce_cases(weighted=flags[0], ignoring=flags[1], spatial=flags[2],
                           smoothing=True, reductions=REDUCTIONS, low=-4.0, high=4.0)),
       st.sampled_from([torch.float16, torch.bfloat16]))
def test_reduced_precision_on_cpu(impl, case, dtype):
    """float16 and bfloat16 logits (and weights) on the CPU: the loss keeps their dtype and
    is close to the float64 loss of the same rounded values."""
    check_on_device(impl.cross_entropy, case, dtype, "cpu", CPU_TOLERANCE)


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(st.booleans().flatmap(lambda spatial: ce_cases(
    spatial=spatial, weighted=True, ignoring=True, smoothing=True, reductions=REDUCTIONS, min_batch=1)))
def test_gradient_matches_f_cross_entropy(impl, case):
    def grad(fn, logits, target, kwargs):
        logits = logits.requires_grad_()
        loss = fn(logits, target, **kwargs)
        if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
            raise AssertionError("the loss is detached from the logits: backward cannot reach them "
                                 "(no .item(), no torch.tensor(...) rebuild, no torch.no_grad())")
        manual_seed(1)
        seed = random_weights(loss)
        return torch.autograd.grad((loss * seed).sum(), logits, allow_unused=True)[0]

    # Where the mean is 0 / 0 (nothing left to average) PyTorch's gradient is 0 by
    # construction, not nan: that corner is not a property of the loss, skip it.
    assume(not case.expected().isnan().any())
    expected = grad(F.cross_entropy, case.logits.clone(), case.target, case.kwargs)
    args, kwargs = case.student_args()
    got = grad(impl.cross_entropy, *args, kwargs)
    if got is None:
        raise AssertionError("no gradient reaches the logits: keep them in the graph")
    assert_same(got, expected, equal_nan=True,
                what=f"gradient w.r.t. the logits of {case.describe()} (vs F.cross_entropy)")


@settings(max_examples=15)
@given(ce_cases(min_batch=1, min_classes=2, ignoring=True), st.sampled_from(["too big", "negative"]),
       st.integers(0, 2), st.data())
def test_target_out_of_range_raises_index_error(impl, case, how, excess, data):
    """Every example meets the first value out of range on its side (C, or the first
    negative that is not ignore_index), and one further out (C + excess, ...)."""
    c = case.logits.shape[1]
    ignore_index = case.kwargs["ignore_index"]
    if how == "too big":
        bads = [c, c + excess]
    else:
        negatives = [v for v in range(-1, -6, -1) if v != ignore_index]
        bads = [negatives[0], negatives[excess]]
    where = data.draw(st.integers(0, case.target.numel() - 1), label="position")
    with on_ordinary_input(impl, case):
        for bad in dict.fromkeys(bads):
            wrong = Case(case.logits, case.target.clone(), case.kwargs)
            wrong.target.view(-1)[where] = bad
            with expect_raises(IndexError, when=f"a target is {bad} with C={c} classes "
                                                f"(ignore_index={ignore_index})"):
                call(impl, wrong)


# ------------------------------------------------------------------ on the GPU

def check_on_device(cross_entropy, case: Case, dtype: torch.dtype, device: str,
                    tolerance: dict = GPU_TOLERANCE) -> None:
    """``cross_entropy`` with ``dtype`` logits (and weights) on ``device`` vs F in float64 on the CPU."""
    logits = case.logits.to(dtype)
    kwargs = {k: v.to(dtype) if isinstance(v, torch.Tensor) else v for k, v in case.kwargs.items()}
    expected = F.cross_entropy(logits.double(), case.target,
                               **{k: v.double() if isinstance(v, torch.Tensor) else v
                                  for k, v in kwargs.items()})
    got = cross_entropy(logits.to(device), case.target.to(device),
                        **{k: v.to(device) if isinstance(v, torch.Tensor) else v
                           for k, v in kwargs.items()})
    assert isinstance(got, torch.Tensor), f"cross_entropy returned {type(got).__name__}, not a tensor"
    assert got.dtype == dtype and got.device.type == device, (
        f"the loss is {got.dtype} on {got.device}; expected {dtype} on {device}, like the logits")
    assert_same(got.double().cpu(), expected, equal_nan=True, **tolerance[dtype],
                what=f"{case.describe()} in {dtype} on {device} vs float64 on the CPU")


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=30)
@given(ce_cases(spatial=True, weighted=True, ignoring=True, smoothing=True, reductions=REDUCTIONS,
                low=-4.0, high=4.0), st.sampled_from([torch.float32, torch.bfloat16]))
def test_reduced_precision_on_gpu(impl, case, dtype):
    check_on_device(impl.cross_entropy, case, dtype, "cuda")
