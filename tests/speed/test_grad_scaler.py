"""Dynamic loss scaling: unscale and detect inf/nan, skip the step, grow and back off the scale,
against torch.amp.GradScaler on the CPU (its state after every step)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.amp import GradScaler

from grader.testing import assert_same
from tests.numerics import manual_seed
from tests.properties import (
    anchored,
    assert_arguments_unchanged,
    assert_no_shared_memory,
    assert_ordinary,
    boolean_twins,
)
from tests.strategies import float_tensors, sampled

_BY_HAND = ("keep the scale and the growth tracker yourself: multiply by backoff_factor on inf/nan, "
            "by growth_factor after growth_interval clean steps in a row")
pytestmark = pytest.mark.exercise(points=15, forbid={
    "torch.amp.GradScaler": _BY_HAND,
    "torch.cuda.amp.GradScaler": _BY_HAND,
    "torch.cpu.amp.GradScaler": _BY_HAND,
    "torch._amp_update_scale_": _BY_HAND,
    "torch._amp_foreach_non_finite_check_and_unscale_": "multiply each gradient by 1 / scale and "
                                                        "check it with torch.isfinite",
}, mutates={"scaled_step": ("modules", "grads", "optimizers")})

DEFAULTS = {"max_norm": None, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000}
SPECIALS = (float("inf"), float("-inf"), float("nan"))


def torch_scaler(scale: float, tracker: int, growth_factor: float, backoff_factor: float,
                 growth_interval: int) -> GradScaler:
    """A CPU GradScaler in the given state (its public state_dict)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = GradScaler("cpu")
    scaler.load_state_dict({"scale": scale, "growth_factor": growth_factor,
                            "backoff_factor": backoff_factor, "growth_interval": growth_interval,
                            "_growth_tracker": tracker})
    return scaler


def state_of(scaler: GradScaler) -> tuple[float, int]:
    state = scaler.state_dict()
    return float(state["scale"]), int(state["_growth_tracker"])


# ------------------------------------------------------------------ unscale_grads

def torch_unscaled(grads: list[torch.Tensor | None], scale: float) -> tuple[list[torch.Tensor | None], bool]:
    """What GradScaler.unscale_ does to each gradient: the operator it calls, with the inverse
    scale it computes (float64 reciprocal, kept as float32). Called directly, since unscale_
    itself refuses float16 gradients (it expects float32 master weights)."""
    unscaled = [None if g is None else g.clone() for g in grads]
    found_inf = torch.zeros(())
    inv_scale = torch.full((), scale, dtype=torch.float32).double().reciprocal().float()
    present = [g for g in unscaled if g is not None]
    if present:
        torch._amp_foreach_non_finite_check_and_unscale_(present, found_inf, inv_scale)
    return unscaled, bool(found_inf.item())


SHAPES = ((), (3,), (2, 3), (4, 1))
LONG_SHAPES = ((3,), (2, 3), (4, 1))  # room for two huge elements of one sign


# Finite magnitudes from 0.6 of the dtype's largest value up to it: two of one sign add up past
# it (their sum is inf, although every element is finite).
NEAR_THE_LIMIT = {dtype: st.floats(float(torch.tensor(0.6 * torch.finfo(dtype).max, dtype=dtype)),
                                   torch.finfo(dtype).max, width=torch.finfo(dtype).bits)
                  for dtype in (torch.float32, torch.float16)}
HUGE_AT = {n: st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True) for n in (3, 4, 6)}


@st.composite
def grad_lists(draw, special: bool | None = None, huge: bool = False):
    """(grads, scale): float32 or float16 gradients (None for a frozen parameter), scaled by a
    power of two; with ``special`` one element is inf or nan; with ``huge`` one gradient holds
    finite elements near the dtype's largest value, whose sum overflows (the scale is then 1 or
    more, so the unscaled gradients stay finite too)."""
    dtype = draw(sampled((torch.float32, torch.float16)), label="dtype")
    scale = 2.0 ** draw(st.integers(0 if huge else -2, 8 if dtype == torch.float16 else 24), label="log2(scale)")
    shapes = draw(st.lists(sampled(SHAPES), min_size=1, max_size=3), label="shapes")
    if huge:
        shapes[0] = draw(sampled(LONG_SHAPES), label="shape of the huge gradient")
    grads: list[torch.Tensor | None] = []
    for i, shape in enumerate(shapes):
        if i and draw(st.booleans(), label=f"grad {i} is None"):
            grads.append(None)
            continue
        grads.append(draw(float_tensors(shape, dtype=torch.float32, low=-100, high=100),
                          label=f"grad {i}").to(dtype))
    if huge:
        g = grads[0].clone()
        sign = draw(sampled((1.0, -1.0)), label="sign of the huge elements")
        for at in draw(HUGE_AT[g.numel()], label="huge elements at"):
            g.view(-1)[at] = sign * draw(NEAR_THE_LIMIT[dtype], label="magnitude")
        grads[0] = g
    if special is None:
        special = draw(st.booleans(), label="an inf or nan")
    if special:
        i = draw(st.sampled_from([i for i, g in enumerate(grads) if g is not None]), label="in grad")
        g = grads[i].clone()
        g.view(-1)[draw(st.integers(0, g.numel() - 1), label="at")] = draw(sampled(SPECIALS), label="value")
        grads[i] = g
    return grads, scale


def clone_all(grads):
    return [None if g is None else g.clone() for g in grads]


@pytest.mark.weight(2)
@example(([torch.tensor([8., 16.]), None], 8.0))  # the spec's examples
@example(([torch.tensor([8., float("inf")])], 8.0))
@settings(max_examples=30)
@given(grad_lists())
def test_unscale_grads_matches_grad_scaler(impl, case):
    grads, scale = case
    given_grads = clone_all(grads)
    got = impl.unscale_grads(given_grads, scale)
    expected, found = torch_unscaled(grads, scale)
    what = (f"unscale_grads of {len(grads)} gradients "
            f"({', '.join('None' if g is None else str(tuple(g.shape)) for g in grads)}), scale={scale}")
    assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}; expected (unscaled, found_inf)"
    unscaled, found_inf = got
    assert type(found_inf) is bool, f"{what}: found_inf is {found_inf!r}; expected a Python bool"
    assert found_inf == found, f"{what}: found_inf is {found_inf}; GradScaler finds {found}"
    assert_same(unscaled, expected, what=f"{what} (GradScaler.unscale_ gives the expected)", equal_nan=True)
    assert_arguments_unchanged(impl, what="the gradients after unscale_grads (return new tensors)")
    for g, u in zip(given_grads, unscaled):
        if g is not None:
            assert_no_shared_memory(u, g, what=f"{what}: an unscaled gradient")


@given(grad_lists(special=False), st.data())
@settings(max_examples=20)
def test_found_inf_meets_its_twin(impl, case, data):
    """The same gradients without and with one inf/nan: False, then True."""
    grads, scale = case
    check_found_inf_twins(impl, grads, scale, data, f"found_inf of finite gradients (scale={scale})")


@given(grad_lists(special=False, huge=True), st.data())
@settings(max_examples=20)
def test_found_inf_looks_at_every_element_not_at_a_sum(impl, case, data):
    """Finite elements near the dtype's largest value, two of one sign: their sum overflows to
    inf, yet no element is inf or nan, so found_inf is False (apex's old check summed each
    gradient and tested the sum); the same gradients with one inf/nan: True."""
    grads, scale = case
    dtype = str(grads[0].dtype).removeprefix("torch.")
    check_found_inf_twins(impl, grads, scale, data,
                          f"found_inf of finite gradients whose elements near the {dtype} limit "
                          f"add up past it (scale={scale}): no element is inf or nan")


def check_found_inf_twins(impl, grads, scale: float, data, what: str) -> None:
    twin = clone_all(grads)
    i = data.draw(st.sampled_from([i for i, g in enumerate(twin) if g is not None]), label="poisoned grad")
    twin[i].view(-1)[data.draw(st.integers(0, twin[i].numel() - 1), label="at")] = \
        data.draw(sampled(SPECIALS), label="value")
    with anchored(lambda: impl.unscale_grads(clone_all(grads), scale)[0],
                  lambda: torch_unscaled(grads, scale)[0],
                  what=f"the unscaled gradients, scale={scale} (beside found_inf)"):
        boolean_twins(lambda: impl.unscale_grads(clone_all(grads), scale)[1], False,
                      lambda: impl.unscale_grads(clone_all(twin), scale)[1],
                      what=what, twin_what=f"found_inf when gradient {i} holds an inf or nan")


# ------------------------------------------------------------------ update_scale

@dataclass(frozen=True)
class Update:
    scale: float
    tracker: int
    found_inf: bool
    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000
    spelled: bool = True

    def kwargs(self) -> dict:
        given = {"growth_factor": self.growth_factor, "backoff_factor": self.backoff_factor,
                 "growth_interval": self.growth_interval}
        return {k: v for k, v in given.items() if self.spelled or v != DEFAULTS[k]}

    def call(self, impl):
        return impl.update_scale(self.scale, self.tracker, self.found_inf, **self.kwargs())

    def expected(self) -> tuple[float, int]:
        """GradScaler.update() after a step whose one gradient is finite or not."""
        p = nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([p], lr=0.0)
        scaler = torch_scaler(self.scale, self.tracker, self.growth_factor, self.backoff_factor,
                              self.growth_interval)
        scaler.scale(torch.zeros(()))
        p.grad = torch.full((1,), math.inf if self.found_inf else 1.0)
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        return state_of(scaler)

    def describe(self) -> str:
        left = [k for k in ("growth_factor", "backoff_factor", "growth_interval") if k not in self.kwargs()]
        return (f"update_scale(scale={self.scale}, growth_tracker={self.tracker}, found_inf={self.found_inf}, "
                f"growth_factor={self.growth_factor}, backoff_factor={self.backoff_factor}, "
                f"growth_interval={self.growth_interval})"
                + (f" ({', '.join(left)} left out: the default)" if left else ""))


def trackers(interval: int):
    """A growth tracker below ``interval``: often the last clean step before a growth
    (interval - 1) or the one before it (interval - 2: an interval counted one short grows
    there), else any."""
    return st.one_of(st.just(interval - 1), st.just(max(interval - 2, 0)), st.integers(0, interval - 1))


@st.composite
def updates(draw, found_inf: bool | None = None) -> Update:
    interval = draw(st.one_of(st.just(2000), st.integers(1, 4)), label="growth_interval")
    tracker = draw(trackers(interval), label="growth_tracker")
    return Update(scale=2.0 ** draw(st.one_of(st.integers(-4, 30), st.just(127)), label="log2(scale)"),
                  tracker=tracker,
                  found_inf=draw(st.booleans(), label="found_inf") if found_inf is None else found_inf,
                  growth_factor=draw(sampled((2.0, 4.0, 3.0)), label="growth_factor"),
                  backoff_factor=draw(sampled((0.5, 0.25, 0.75)), label="backoff_factor"),
                  growth_interval=interval, spelled=draw(st.booleans(), label="spelled"))


@pytest.mark.weight(3)
@example(Update(65536.0, 5, False, spelled=False))  # the spec's examples
@example(Update(65536.0, 1999, False, spelled=False))
@example(Update(65536.0, 1998, False, spelled=False))  # the 1999th clean step: no growth yet
@example(Update(65536.0, 1999, True, spelled=False))
@example(Update(2.0 ** 127, 0, False, growth_interval=1))  # a growth past float32's range is not made
@settings(max_examples=50)
@given(updates())
def test_update_scale_matches_grad_scaler(impl, case):
    got = case.call(impl)
    assert_same(got, case.expected(), what=f"{case.describe()} (GradScaler's scale and growth tracker "
                                             "after update() give the expected)")


@settings(max_examples=15)
@given(updates(found_inf=False), st.integers(2, 6))
def test_the_scale_grows_on_the_interval_th_clean_step_in_a_row(impl, first, interval):
    """A run of clean steps from a fresh tracker: the scale grows exactly every
    ``growth_interval`` steps (not one early, not one late, and the count starts again)."""
    case = Update(first.scale, 0, False, first.growth_factor, first.backoff_factor, interval)
    scale, tracker = case.scale, 0
    oracle = case
    for step in range(2 * interval + 1):
        got = impl.update_scale(scale, tracker, False, case.growth_factor, case.backoff_factor, interval)
        expected = oracle.expected()
        assert_same(got, expected, what=f"step {step + 1} of a run of clean steps: {oracle.describe()}")
        scale, tracker = expected
        oracle = Update(scale, tracker, False, case.growth_factor, case.backoff_factor, interval)


# ------------------------------------------------------------------ scaled_step

@dataclass
class Step:
    """A float32 Linear/Tanh/Linear model, an optimizer over it, one batch."""

    seed: int
    hidden: int
    optimizer: str
    inputs: torch.Tensor
    targets: torch.Tensor
    scale: float
    tracker: int
    max_norm: float | None
    growth_factor: float
    backoff_factor: float
    growth_interval: int
    spelled: bool = True
    # What the last step left in every .grad: nothing (None), its finite gradients, or the
    # gradients of a skipped step (one holding an inf or nan).
    stale: str = "none"

    def build(self) -> tuple[nn.Module, torch.optim.Optimizer]:
        with torch.random.fork_rng(devices=[]):
            manual_seed(self.seed)
            model = nn.Sequential(nn.Linear(self.inputs.shape[1], self.hidden), nn.Tanh(),
                                  nn.Linear(self.hidden, self.targets.shape[1]))
        if self.optimizer == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        else:
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        warm_up(model, optimizer, self.inputs)
        if self.stale != "none":
            leave_stale_gradients(model, self.seed, poisoned=self.stale == "inf")
        return model, optimizer

    def kwargs(self) -> dict:
        given = {"max_norm": self.max_norm, "growth_factor": self.growth_factor,
                 "backoff_factor": self.backoff_factor, "growth_interval": self.growth_interval}
        return {k: v for k, v in given.items() if self.spelled or v != DEFAULTS[k]}

    def call(self, impl, model, optimizer):
        return impl.scaled_step(model, optimizer, self.inputs.clone(), self.targets.clone(), self.scale,
                                self.tracker, **self.kwargs())

    def expected(self) -> tuple[tuple[float, int, bool], nn.Module, torch.optim.Optimizer]:
        """The GradScaler loop on a copy: (scale, tracker, stepped), the model, the optimizer."""
        model, optimizer = self.build()
        scaler = torch_scaler(self.scale, self.tracker, self.growth_factor, self.backoff_factor,
                              self.growth_interval)
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(self.inputs), self.targets)).backward()
        scaler.unscale_(optimizer)
        if self.max_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), self.max_norm)
        scaler.step(optimizer)
        scaler.update()
        scale, tracker = state_of(scaler)
        stepped = scale >= self.scale  # update() backs off exactly when the step was skipped
        return (scale, tracker, stepped), model, optimizer

    def describe(self) -> str:
        left = [k for k in DEFAULTS if k not in self.kwargs()]
        bad = "" if bool(torch.isfinite(self.inputs).all()) else ", inputs holding inf/nan"
        bad += {"none": "", "finite": ", the last step's gradients still in every .grad",
                "inf": ", a skipped step's gradients (one inf or nan) still in every .grad"}[self.stale]
        return (f"scaled_step(batch of {self.inputs.shape[0]}{bad}, {self.optimizer}, scale={self.scale}, "
                f"growth_tracker={self.tracker}, max_norm={self.max_norm}, growth_factor="
                f"{self.growth_factor}, backoff_factor={self.backoff_factor}, growth_interval="
                f"{self.growth_interval})" + (f" ({', '.join(left)} left out: the default)" if left else ""))


def warm_up(model: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor) -> None:
    """One ordinary step first, so the optimizer has state (momentum, Adam's moments) that a
    skipped step must leave alone."""
    optimizer.zero_grad()
    model(torch.nan_to_num(inputs, nan=0.0, posinf=1.0, neginf=-1.0)).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()


def leave_stale_gradients(model: nn.Module, seed: int, poisoned: bool) -> None:
    """Fill every .grad as the last step of a training loop leaves it: unscaled gradients of
    the size a step makes (with ``poisoned``, one element inf or nan: a skipped step's)."""
    generator = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=generator)
    if poisoned:
        first = next(model.parameters())
        first.grad.view(-1)[0] = SPECIALS[seed % len(SPECIALS)]


@st.composite
def steps(draw, trouble: str | None = None, stale: bool = False) -> Step:
    """``trouble``: "none" (finite gradients), "bad batch" (an inf or nan input), "overflow" (a
    scale so large the scaled gradients overflow float32), or drawn. With ``stale`` every .grad
    holds what the last step left there (finite, or a skipped step's inf/nan), and the scale is
    small (1 to 16), so a gradient added to them still shows after unscaling."""
    n, n_in, n_out = (draw(st.integers(1, 4), label=label) for label in ("batch", "in", "out"))
    trouble = trouble or draw(sampled(("none", "none", "bad batch", "overflow")), label="trouble")
    inputs = draw(float_tensors((n, n_in), dtype=torch.float32, low=-2, high=2), label="inputs")
    big = 1000.0 if trouble == "overflow" else 2.0
    targets = draw(float_tensors((n, n_out), dtype=torch.float32, low=-big, high=big), label="targets")
    if trouble == "overflow":
        targets = targets.sign().where(targets != 0, torch.ones(())) * 1000.0
        scale = 2.0 ** draw(st.integers(125, 127), label="log2(scale)")
    else:
        scale = 2.0 ** draw(st.integers(0, 4 if stale else 24), label="log2(scale)")
    if trouble == "bad batch":
        inputs = inputs.clone()
        inputs.view(-1)[draw(st.integers(0, inputs.numel() - 1), label="at")] = \
            draw(sampled(SPECIALS), label="value")
    interval = draw(st.one_of(st.just(2000), st.integers(1, 3)), label="growth_interval")
    return Step(seed=draw(st.integers(0, 2**16), label="init seed"),
                hidden=draw(st.integers(1, 4), label="hidden"),
                optimizer=draw(sampled(("sgd", "adam")), label="optimizer"),
                inputs=inputs, targets=targets, scale=scale,
                tracker=draw(trackers(interval), label="growth_tracker"),
                max_norm=draw(st.one_of(st.none(), sampled((0.01, 0.1, 1.0))), label="max_norm"),
                growth_factor=draw(sampled((2.0, 4.0)), label="growth_factor"),
                backoff_factor=draw(sampled((0.5, 0.25)), label="backoff_factor"),
                growth_interval=interval, spelled=draw(st.booleans(), label="spelled"),
                stale=draw(sampled(("finite", "inf")), label="the last step's .grad") if stale else "none")


def check_step(got, model: nn.Module, optimizer: torch.optim.Optimizer, case: Step) -> None:
    """The returned state, the parameters and (after a real step) their unscaled, clipped
    gradients, and the optimizer's state, against the GradScaler loop's."""
    (scale, tracker, stepped), expected_model, expected_optimizer = case.expected()
    what = case.describe()
    assert_same(got, (scale, tracker, stepped), what=f"{what}: (new_scale, new_tracker, stepped) (a GradScaler "
                                             "loop gives the expected)")
    for (name, p), e in zip(model.named_parameters(), expected_model.parameters()):
        assert_same(p.detach(), e.detach(), what=f"{what}: parameter {name} after the step"
                    + ("" if stepped else " (the step must be skipped: a gradient is inf or nan)"))
        if stepped:
            assert_same(p.grad, e.grad, what=f"{what}: the gradient of {name} after the step (unscaled, "
                        "then clipped)")
    for (key, value), (_, e) in zip(sorted(_optimizer_state(optimizer).items()),
                                    sorted(_optimizer_state(expected_optimizer).items())):
        assert_same(value, e, what=f"{what}: the optimizer's {key}")


def _optimizer_state(optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    state = {}
    for i, p in enumerate(p for group in optimizer.param_groups for p in group["params"]):
        for key, value in optimizer.state.get(p, {}).items():
            if isinstance(value, torch.Tensor):
                state[f"state[{i}][{key!r}]"] = value.detach()
    return state


SPEC_LIKE = Step(0, 3, "sgd", torch.tensor([[0.5, -1.0], [1.5, 0.25]]), torch.tensor([[1.0], [-1.0]]),
                 65536.0, 1999, None, 2.0, 0.5, 2000, spelled=False)


@pytest.mark.weight(4)
@example(SPEC_LIKE)
@example(replace(SPEC_LIKE, tracker=1998))  # the 1999th clean step with the default interval: no growth
@settings(max_examples=30)
@given(steps())
def test_scaled_step_matches_a_grad_scaler_loop(impl, case):
    model, optimizer = case.build()
    got = case.call(impl, model, optimizer)
    check_step(got, model, optimizer, case)


@pytest.mark.weight(2)
@settings(max_examples=15)
@given(steps(trouble="none", stale=True))
def test_the_step_clears_the_gradients_the_last_one_left(impl, case):
    """A loop's next step finds the last step's gradients in every .grad (finite, or a skipped
    step's inf/nan): step 1 clears them (optimizer.zero_grad()) before back-propagating, so
    they neither add to the new gradients nor make a clean step look like an overflow."""
    model, optimizer = case.build()
    got = case.call(impl, model, optimizer)
    check_step(got, model, optimizer, case)


@pytest.mark.weight(2)
@settings(max_examples=15)
@given(steps(trouble="none"), st.data())
def test_a_step_with_inf_or_nan_is_skipped(impl, case, data):
    """The same model and batch, clean and with an inf/nan input: stepped True, then False
    with the weights and the optimizer's state untouched and the scale backed off."""
    bad_inputs = case.inputs.clone()
    bad_inputs.view(-1)[data.draw(st.integers(0, bad_inputs.numel() - 1), label="at")] = \
        data.draw(sampled(SPECIALS), label="value")
    bad = Step(**{**case.__dict__, "inputs": bad_inputs})
    runs = []
    for c in (case, bad):
        model, optimizer = c.build()
        runs.append((c, c.call(impl, model, optimizer), model, optimizer))
    with anchored(lambda: check_step(runs[0][1], runs[0][2], runs[0][3], case)):
        boolean_twins(lambda: _stepped(runs[0][1]), True, lambda: _stepped(runs[1][1]),
                      what=f"stepped of {case.describe()}", twin_what=f"stepped of {bad.describe()}")
        check_step(runs[1][1], runs[1][2], runs[1][3], bad)


def _stepped(got):
    return got[2] if isinstance(got, tuple) and len(got) == 3 else got


@settings(max_examples=10)
@given(steps(trouble="none").filter(lambda s: s.max_norm is not None and s.scale >= 16))
def test_clipping_sees_the_unscaled_gradients(impl, case):
    """With max_norm, the gradients after the step have at most that norm, as clipping the
    UNSCALED gradients leaves them (clipping the scaled ones cuts them scale times harder)."""
    model, optimizer = case.build()
    got = case.call(impl, model, optimizer)
    check_step(got, model, optimizer, case)


@settings(max_examples=10)
@given(steps(trouble="none"))
def test_inputs_and_targets_are_left_alone(impl, case):
    model, optimizer = case.build()
    got = case.call(impl, model, optimizer)
    assert_arguments_unchanged(impl, what="inputs and targets after scaled_step (only the model, its "
                                          "gradients and the optimizer may change)")
    assert_ordinary(lambda: check_step(got, model, optimizer, case))


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@settings(max_examples=10)
@given(steps())
def test_on_gpu_a_step_matches_the_cpu_grad_scaler(impl, case):
    """The model, the optimizer's state, the batch and so the gradients on the GPU: the scale
    logic is the same, the inf/nan check must look at CUDA tensors (and answer a Python bool)."""
    model, optimizer = case.build()
    model.cuda()
    optimizer.load_state_dict(optimizer.state_dict())  # moves the state with the parameters
    got = impl.scaled_step(model, optimizer, case.inputs.cuda(), case.targets.cuda(), case.scale,
                           case.tracker, **case.kwargs())
    expected, expected_model, _ = case.expected()
    assert_same(got, expected, what=f"{case.describe()} on cuda: (new_scale, new_tracker, stepped)")
    for (name, p), e in zip(model.named_parameters(), expected_model.parameters()):
        assert p.device.type == "cuda", f"parameter {name} left the GPU"
        assert_same(p.detach().cpu(), e.detach(), what=f"{case.describe()} on cuda: parameter {name}",
                    rtol=1e-4, atol=1e-5)
