"""One GAN step: D on real vs detached fake, then a non-saturating G step against the updated D."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import as_tuple, assert_same
from tests.numerics import full_float32, manual_seed
from tests.properties import assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.binary_cross_entropy": "the discriminator returns logits: use "
                              "F.binary_cross_entropy_with_logits(logits, target), which folds "
                              "the sigmoid in without losing precision",
}, mutates={"gan_step": ("modules", "grads", "optimizers")})

# ------------------------------------------------------------------ cases


@dataclass
class GanCase:
    """Float64 models, optimizer recipes and the batches of a few GAN steps.

    The models here are the originals: every run gets its own deep copies and
    fresh optimizers built from the same recipes, so runs cannot share state.
    """

    generator: nn.Module
    discriminator: nn.Module
    opt_g: dict[str, Any]
    opt_d: dict[str, Any]
    batches: list[tuple[torch.Tensor, torch.Tensor]]  # (real, noise) per step
    init_seed: int = 0  # torch.manual_seed before building G then D (shown in counterexamples)

    def copies(self) -> tuple[nn.Module, nn.Module, torch.optim.Optimizer, torch.optim.Optimizer]:
        generator, discriminator = copy.deepcopy(self.generator), copy.deepcopy(self.discriminator)
        return (generator, discriminator, make_optimizer(self.opt_g, generator),
                make_optimizer(self.opt_d, discriminator))


def make_optimizer(recipe: dict[str, Any], module: nn.Module) -> torch.optim.Optimizer:
    kwargs = {k: v for k, v in recipe.items() if k != "name"}
    return getattr(torch.optim, recipe["name"])(module.parameters(), **kwargs)


def mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out)).double()


sgd_recipes = st.builds(lambda lr, momentum: {"name": "SGD", "lr": lr, "momentum": momentum},
                        st.sampled_from([0.05, 0.1, 0.5]), st.sampled_from([0.0, 0.9]))
adam_recipes = st.builds(lambda lr: {"name": "Adam", "lr": lr}, st.sampled_from([0.01, 0.1]))
optimizer_recipes = st.one_of(sgd_recipes, adam_recipes)


@st.composite
def gan_cases(draw, min_steps: int = 1, max_steps: int = 2,
              recipes: st.SearchStrategy = optimizer_recipes) -> GanCase:
    """Small Linear/ReLU/Linear G (noise -> data) and D (data -> one logit)."""
    noise_dim, data_dim = draw(st.integers(1, 4), label="noise_dim"), draw(st.integers(1, 4), label="data_dim")
    hidden = draw(st.integers(1, 6), label="hidden")
    n_real, n_fake = draw(st.integers(1, 5), label="N (real)"), draw(st.integers(1, 5), label="M (noise)")
    steps = draw(st.integers(min_steps, max_steps), label="steps")
    seed = draw(st.integers(0, 2**16), label="init seed")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        generator, discriminator = mlp(noise_dim, hidden, data_dim), mlp(data_dim, hidden, 1)
    batches = [(draw(float_tensors((n_real, data_dim), low=-3, high=3)),
                draw(float_tensors((n_fake, noise_dim), low=-3, high=3))) for _ in range(steps)]
    return GanCase(generator, discriminator, draw(recipes, label="opt_g"),
                   draw(recipes, label="opt_d"), batches, seed)


# ------------------------------------------------------------------ runs


def run_steps(gan_step, case: GanCase, models=None) -> tuple[list[Any], nn.Module, nn.Module]:
    """Call ``gan_step`` once per batch on copies of the case's models."""
    generator, discriminator, opt_g, opt_d = models or case.copies()
    losses = [gan_step(generator, discriminator, opt_g, opt_d, real.clone(), noise.clone())
              for real, noise in case.batches]
    return losses, generator, discriminator


def params(module: nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    for name, p in module.named_parameters():
        yield name, p.detach()


def assert_same_params(got: nn.Module, expected: nn.Module, which: str, when: str,
                       **tolerances: float) -> None:
    for (name, g), (_, e) in zip(params(got), params(expected)):
        assert_same(g, e, what=f"{which} parameter '{name}' {when}", **tolerances)


def as_floats(result: Any, step: int) -> tuple[float, float]:
    """The two loss values, whatever scalar type carries them (types are another property)."""
    assert isinstance(result, (tuple, list)) and len(result) == 2, (
        f"step {step}: gan_step should return (loss_d, loss_g), got {type(result).__name__} {result!r}")
    return float(result[0]), float(result[1])


def put_stale_grads(*modules: nn.Module) -> None:
    """Leftover gradients, as a previous step or an earlier backward would leave them."""
    for module in modules:
        for p in module.parameters():
            p.grad = 10 * torch.randn_like(p)


def loss_d_as_they_were(case: GanCase) -> float:
    """bce(D(real), 1) + bce(D(G(noise)), 0) of the first batch, with the case's models."""
    real, noise = case.batches[0]
    with torch.no_grad():
        real_logits = case.discriminator(real)
        fake_logits = case.discriminator(case.generator(noise))
        return (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))).item()


def check_first_step(result: Any, discriminator: nn.Module, case: GanCase, when: str = "") -> None:
    """After one gan_step on the case's first batch: loss_d is the spec's formula on the models
    as they were, and D equals D after the D step alone (the G step must not move it). Plain
    PyTorch oracles: this rides along with the form, protocol and no-mutation checks."""
    loss_d, _ = as_floats(result, 1)
    assert_same(loss_d, loss_d_as_they_were(case),
                what=f"loss_d{when} (bce(D(real), 1) + bce(D(G(noise)), 0) with D and G as they "
                     "were when gan_step was called)")
    assert_same_params(discriminator, discriminator_step_only(case), "discriminator",
                       f"after one call{when} (opt_d.zero_grad(), loss_d.backward(), opt_d.step(); "
                       "the G step leaves D alone)")


def discriminator_step_only(case: GanCase) -> nn.Module:
    """D after the D half of one step, computed with plain PyTorch (no G step at all)."""
    generator, discriminator, _, opt_d = case.copies()
    real, noise = case.batches[0]
    fake = generator(noise).detach()
    real_logits, fake_logits = discriminator(real), discriminator(fake)
    loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
            + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()
    return discriminator


# ------------------------------------------------------------------ properties


@pytest.mark.weight(3)
@settings(max_examples=25)
@given(gan_cases())
def test_losses_match_reference(impl, ref, case):
    got, _, _ = run_steps(impl.gan_step, case)
    expected, _, _ = run_steps(ref.gan_step, case)
    for step, (g, e) in enumerate(zip(got, expected), start=1):
        assert_same(as_floats(g, step), e, what=f"(loss_d, loss_g) returned by step {step}")


@pytest.mark.weight(3)
@settings(max_examples=25)
@given(gan_cases())
def test_generator_params_match_reference(impl, ref, case):
    _, generator, _ = run_steps(impl.gan_step, case)
    _, expected, _ = run_steps(ref.gan_step, case)
    assert_same_params(generator, expected, "generator",
                       f"after {len(case.batches)} step(s) (G learns from D *after* D's update, "
                       "with target 1 on fake samples, and nothing else)")


@pytest.mark.weight(3)
@settings(max_examples=25)
@given(gan_cases())
def test_discriminator_params_match_reference(impl, ref, case):
    _, _, discriminator = run_steps(impl.gan_step, case)
    _, _, expected = run_steps(ref.gan_step, case)
    assert_same_params(discriminator, expected, "discriminator",
                       f"after {len(case.batches)} step(s)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(gan_cases(max_steps=2))
def test_stale_grads_change_nothing(impl, ref, case):
    models = case.copies()
    put_stale_grads(models[0], models[1])
    _, generator, discriminator = run_steps(impl.gan_step, case, models)
    _, expected_g, expected_d = run_steps(ref.gan_step, case)
    when = ("when .grad held leftover values before the call (zero_grad() each optimizer "
            "before its backward)")
    assert_same_params(discriminator, expected_d, "discriminator", when)
    assert_same_params(generator, expected_g, "generator", when)


@pytest.mark.hidden
@pytest.mark.weight(2)
@settings(max_examples=20)
@given(gan_cases(max_steps=1))
def test_generator_step_leaves_discriminator_alone(impl, case):
    _, _, discriminator = run_steps(impl.gan_step, case)
    assert_same_params(discriminator, discriminator_step_only(case), "discriminator",
                       "after one call: it must equal D after the D step alone (the G step "
                       "steps opt_g only, never opt_d)")


@settings(max_examples=10)
@given(gan_cases(max_steps=1))
def test_returns_python_floats(impl, case):
    """The form, then the same call's loss_d and D against plain PyTorch."""
    (result,), _, discriminator = run_steps(impl.gan_step, case)
    assert isinstance(result, tuple) and len(as_tuple(result)) == 2, (
        f"gan_step should return a tuple (loss_d, loss_g), got {type(result).__name__} {result!r}")
    result = as_tuple(result)  # a named tuple is a tuple too
    for name, value in zip(("loss_d", "loss_g"), result):
        assert type(value) is float, (
            f"{name} is a {type(value).__name__}, expected a Python float: return loss.item() "
            "(a tensor would keep the whole graph alive)")
    check_first_step(result, discriminator, case)


@settings(max_examples=10)
@given(gan_cases(max_steps=1))
def test_inputs_unchanged(impl, case):
    """real and noise keep their values, and the same call's loss_d and D are right."""
    real, noise = case.batches[0]
    real_arg, noise_arg = real.clone(), noise.clone()
    models = case.copies()
    result = impl.gan_step(*models, real_arg, noise_arg)
    assert_arguments_unchanged(impl, what="real and noise after the call")
    assert_same(real_arg, real, what="real after the call (it must be left unchanged)")
    assert_same(noise_arg, noise, what="noise after the call (it must be left unchanged)")
    assert_ordinary(lambda: check_first_step(result, models[1], case))


@pytest.mark.weight(2)
@settings(max_examples=12)
@given(gan_cases(max_steps=1), st.sampled_from([60.0, -60.0]))
def test_saturated_discriminator_stays_finite(impl, case, scale):
    """D's last layer scaled so its logits reach +-60 or more: sigmoid(logit) is exactly 1.0
    or 0.0 in float64 there, so log(1 - sigmoid) or log(sigmoid) is -inf; the loss on the
    logits (binary_cross_entropy_with_logits) stays finite and exact."""
    with torch.no_grad():
        case.discriminator[2].weight.mul_(scale)
        case.discriminator[2].bias.mul_(scale).add_(scale / 2)
    generator, discriminator, opt_g, opt_d = case.copies()
    real, noise = case.batches[0]
    result = impl.gan_step(generator, discriminator, opt_g, opt_d, real.clone(), noise.clone())
    check_first_step(result, discriminator, case, f" with D's logits scaled by {scale:g} "
                                                  "(compute the loss on the logits)")


# ------------------------------------------------------------------ GPU


def check_float32_against_float64(gan_step, ref_step, case: GanCase, device: str) -> None:
    """The step in float32 on ``device`` against the float64 CPU reference.

    Both start from the same float32-representable weights and data, so the
    only difference left is float32 arithmetic.
    """
    rounded = GanCase(copy.deepcopy(case.generator).float().double(),
                      copy.deepcopy(case.discriminator).float().double(),
                      case.opt_g, case.opt_d,
                      [(r.float().double(), n.float().double()) for r, n in case.batches])
    expected, expected_g, expected_d = run_steps(ref_step, rounded)
    generator = copy.deepcopy(rounded.generator).to(device, torch.float32)
    discriminator = copy.deepcopy(rounded.discriminator).to(device, torch.float32)
    models = (generator, discriminator, make_optimizer(case.opt_g, generator),
              make_optimizer(case.opt_d, discriminator))
    on_device = GanCase(generator, discriminator, case.opt_g, case.opt_d,
                        [(r.to(device, torch.float32), n.to(device, torch.float32))
                         for r, n in case.batches])
    with full_float32():
        got, generator, discriminator = run_steps(gan_step, on_device, models)
    tolerances = {"rtol": 1e-4, "atol": 1e-5}
    for step, (g, e) in enumerate(zip(got, expected), start=1):
        assert_same(as_floats(g, step), e, what=f"(loss_d, loss_g) of float32 step {step} on {device}",
                    **tolerances)
    for which, got_module, expected_module in (("generator", generator, expected_g),
                                               ("discriminator", discriminator, expected_d)):
        for (name, g), (_, e) in zip(params(got_module), params(expected_module)):
            assert g.device.type == device, f"{which} parameter '{name}' moved to {g.device}"
            assert_same(g.cpu().double(), e, what=f"{which} parameter '{name}' after float32 "
                        f"steps on {device} (vs the float64 reference)", **tolerances)



# Public properties: their oracles are the spec's own formula and optimizer state,
# so they ship in the student release (the ones above need the reference).

@settings(max_examples=25)
@given(gan_cases(max_steps=1))
def test_loss_d_scores_the_models_as_they_were(impl, case):
    generator, discriminator, opt_g, opt_d = case.copies()
    real, noise = case.batches[0]
    with torch.no_grad():
        real_logits, fake_logits = discriminator(real), discriminator(generator(noise))
        expected = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                    + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    result = impl.gan_step(generator, discriminator, opt_g, opt_d, real.clone(), noise.clone())
    loss_d, _ = as_floats(result, 1)
    assert_same(loss_d, expected.item(),
                what="loss_d (bce(D(real), 1) + bce(D(G(noise)), 0) with D and G as they were "
                     "when gan_step was called)")


@settings(max_examples=10)
@given(gan_cases(max_steps=1, recipes=adam_recipes))
def test_each_optimizer_steps_exactly_once(impl, case):
    """The step counts, then the same call's loss_d and D against plain PyTorch."""
    generator, discriminator, opt_g, opt_d = case.copies()
    real, noise = case.batches[0]
    result = impl.gan_step(generator, discriminator, opt_g, opt_d, real.clone(), noise.clone())
    for name, optimizer in (("opt_d", opt_d), ("opt_g", opt_g)):
        steps = sorted({int(state["step"]) for state in optimizer.state.values()}) or [0]
        assert steps == [1], (
            f"after one gan_step, {name} (Adam) has taken {steps} step(s) per parameter; "
            "each optimizer must step exactly once per gan_step")
    check_first_step(result, discriminator, case)

@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=15)
@given(gan_cases(max_steps=2, recipes=sgd_recipes))
def test_float32_on_gpu_matches_float64_reference(impl, ref, case):
    check_float32_against_float64(impl.gan_step, ref.gan_step, case, "cuda")
