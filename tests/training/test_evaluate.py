"""Evaluation: one forward per batch in eval mode under no_grad (predictions equal to the
model's in eval mode, no graph behind them), the loss of the whole set (per-batch means
weighted by batch size), and every module's own training flag back afterwards, also when
a batch raises, with BatchNorm's running statistics, the grad mode and the random state
untouched."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import BatchSizes, assert_same, expect_raises
from tests.numerics import full_float32, manual_seed
from tests.properties import anchored, assert_arguments_unchanged, harder_than
from tests.strategies import float_tensors, int_tensors, reusable, sampled

pytestmark = pytest.mark.exercise(points=10)

LOSSES = ("mse_loss", "l1_loss", "cross_entropy")
ARRIVALS = ("train", "eval", "mixed")


# ------------------------------------------------------------------ cases

@dataclass
class EvalCase:
    """A float64 model with BatchNorm and Dropout, the modes its modules arrive in, and its
    batches (sizes may differ: the last is often short)."""

    model: nn.Sequential
    modes: tuple[bool, ...]  # each module's training flag on arrival, in model.modules() order
    loss_name: str
    batches: list[tuple[torch.Tensor, torch.Tensor]]
    init_seed: int = 0  # torch.manual_seed before building the model (shown in counterexamples)

    def copies(self) -> tuple[nn.Module, list[tuple[torch.Tensor, torch.Tensor]]]:
        """A fresh model in its arrival modes and cloned batches, for one call."""
        model = copy.deepcopy(self.model)
        for module, training in zip(model.modules(), self.modes):
            module.training = training
        return model, [(x.clone(), y.clone()) for x, y in self.batches]

    def inputs(self) -> list[torch.Tensor]:
        return [x.clone() for x, _ in self.batches]

    def sizes(self) -> list[int]:
        return [x.shape[0] for x, _ in self.batches]

    def arrival(self) -> str:
        if all(self.modes):
            return "in training mode"
        if not any(self.modes):
            return "in eval mode"
        names = [f"{name!r} ({type(m).__name__})"  # '' is the model itself, as named_modules names it
                 for (name, m), training in zip(self.model.named_modules(), self.modes) if not training]
        return f"with {', '.join(names)} in eval mode and the rest training"

    def text(self) -> str:
        return f"{self.loss_name}, batch sizes {self.sizes()}, the model arriving {self.arrival()}"

    def expected_outputs(self) -> torch.Tensor:
        """The model in eval mode, batch by batch, without a graph."""
        model = copy.deepcopy(self.model).eval()
        with torch.no_grad():
            return torch.cat([model(x) for x, _ in self.batches])

    def expected_loss(self) -> torch.Tensor:
        """The loss of the concatenated set."""
        targets = torch.cat([y for _, y in self.batches])
        return getattr(F, self.loss_name)(self.expected_outputs(), targets)

    def predict(self, impl):
        model, _ = self.copies()
        return impl.predict(model, self.inputs())

    def evaluate(self, impl):
        model, batches = self.copies()
        return impl.evaluate(model, batches, self.loss_name)


def build_model(seed: int, n_in: int, hidden: int, n_out: int, nested: bool, p: float) -> nn.Sequential:
    """Linear, BatchNorm1d (running statistics far from 0 and 1), Tanh, Dropout(p), Linear."""
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        first = [nn.Linear(n_in, hidden), nn.BatchNorm1d(hidden)]
        rest = [nn.Tanh(), nn.Dropout(p), nn.Linear(hidden, n_out)]
        model = (nn.Sequential(nn.Sequential(*first), *rest) if nested else nn.Sequential(*first, *rest)).double()
        bn = next(m for m in model.modules() if isinstance(m, nn.BatchNorm1d))
        with torch.no_grad():
            bn.running_mean.uniform_(-1.0, 1.0)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
            bn.num_batches_tracked.fill_(5)
    return model


@reusable
def mixed_flags(count: int) -> st.SearchStrategy[list[bool]]:
    """A training flag per module, some True and some False."""
    return st.lists(st.booleans(), min_size=count, max_size=count).filter(lambda flags: any(flags) and not all(flags))


@st.composite
def eval_cases(draw, arrivals=ARRIVALS, min_batches: int = 1, max_batches: int = 3) -> EvalCase:
    loss_name = draw(sampled(LOSSES), label="loss_name")
    classify = loss_name == "cross_entropy"
    n_in, hidden = draw(st.integers(1, 3), label="in"), draw(st.integers(1, 4), label="hidden")
    n_out = draw(st.integers(2 if classify else 1, 3), label="out")
    seed = draw(st.integers(0, 2**16), label="init seed")
    model = build_model(seed, n_in, hidden, n_out, draw(st.booleans(), label="nested"),
                        draw(sampled((0.5, 0.25)), label="dropout p"))
    count = len(list(model.modules()))
    arrival = draw(sampled(tuple(arrivals)), label="arrives")
    if arrival == "mixed":
        modes = tuple(draw(mixed_flags(count), label="training flags"))
    else:
        modes = (arrival == "train",) * count
    full = draw(st.integers(1, 4), label="batch size")
    k = draw(st.integers(min_batches, max_batches), label="batches")
    sizes = [full] * (k - 1) + [draw(st.integers(1, full), label="last batch size")]
    batches = []
    for i, n in enumerate(sizes):
        x = draw(float_tensors((n, n_in), low=-3, high=3), label=f"inputs {i}")
        y = draw(int_tensors((n,), 0, n_out - 1) if classify
                 else float_tensors((n, n_out), low=-3, high=3), label=f"targets {i}")
        batches.append((x, y))
    return EvalCase(model, modes, loss_name, batches, seed)


SEVERAL = eval_cases(min_batches=2)


def spec_case() -> EvalCase:
    """The spec's example: BatchNorm1d(1) with running mean 1 and variance 4, Dropout(0.5),
    batches of 2 and 1 samples, mean squared error against 0: the outputs 0, 1, 2 and the loss
    5 / 3 (not 2.25, the mean of the batch means)."""
    model = nn.Sequential(nn.BatchNorm1d(1), nn.Dropout(0.5))
    with torch.no_grad():
        model[0].running_mean.fill_(1.0)
        model[0].running_var.fill_(4.0)
    batches = [(torch.tensor([[1.0], [3.0]]), torch.zeros(2, 1)), (torch.tensor([[5.0]]), torch.zeros(1, 1))]
    return EvalCase(model, (True, True, True), "mse_loss", batches)


def outputs_of(got: object) -> object:
    """The outputs of an evaluate answer (what it returned, if it is no pair)."""
    return got[1] if isinstance(got, tuple) and len(got) == 2 else got


def check_pair(got: object, what: str) -> tuple[object, object]:
    assert isinstance(got, tuple) and len(got) == 2, (
        f"{what}: expected a tuple (loss, outputs), got {type(got).__name__}")
    return got[0], got[1]


# ------------------------------------------------------------------ predictions and loss

@pytest.mark.weight(3)
@settings(max_examples=22)
@example(spec_case())
@given(eval_cases())
def test_predictions_match_the_model_in_eval_mode(impl, case):
    assert_same(case.predict(impl), case.expected_outputs(),
                what=f"predict's outputs ({case.text()}), vs the model in eval mode batch by batch "
                     "(Dropout passes everything, BatchNorm uses its running statistics)")


@pytest.mark.weight(3)
@settings(max_examples=22)
@example(spec_case())
@given(eval_cases())
def test_loss_is_the_mean_over_every_sample(impl, case):
    """The loss of the whole set: each batch's mean weighted by its size, the short last batch
    included; when the outputs are wrong too, that is what the property reports."""
    got = case.evaluate(impl)
    loss, outputs = check_pair(got, f"evaluate ({case.text()})")
    with harder_than(lambda: outputs, case.expected_outputs,
                     what=f"the same call's outputs ({case.text()})"):
        assert_same(loss, case.expected_loss(),
                    what=f"evaluate's loss ({case.text()}), vs {case.loss_name} of the concatenated "
                         "set: weigh each batch's mean loss by its size n_i / N")


@pytest.mark.weight(2)
@settings(max_examples=14)
@given(eval_cases())
def test_outputs_carry_no_graph(impl, case):
    """The model parameters require grad, as in training: outputs computed with autograd on
    carry a graph (requires_grad, a grad_fn) whatever the model's mode."""
    predicted = case.predict(impl)
    got = case.evaluate(impl)
    loss, outputs = check_pair(got, f"evaluate ({case.text()})")
    with anchored(lambda: predicted, case.expected_outputs, what=f"predict's outputs ({case.text()})"), \
            anchored(lambda: outputs, case.expected_outputs, what=f"evaluate's outputs ({case.text()})"):
        for name, t in (("predict's outputs", predicted), ("evaluate's loss", loss), ("evaluate's outputs", outputs)):
            assert not (isinstance(t, torch.Tensor) and t.requires_grad), (
                f"{name}: requires_grad is True ({case.text()}): a graph stands behind it. Run the forwards "
                "under torch.no_grad(): model.eval() changes what the layers compute, not what autograd records")


# ------------------------------------------------------------------ the model handed back

@pytest.mark.weight(2)
@settings(max_examples=14)
@given(eval_cases(arrivals=("mixed", "mixed", "eval")))
def test_every_module_gets_its_own_mode_back(impl, case):
    """The model arrives partly or wholly in eval mode: afterwards each module has the flag it
    came with (not model.train(), not one flag for the whole model), and its running statistics,
    model parameters and the batches are unchanged."""
    predicted = case.predict(impl)
    with anchored(lambda: predicted, case.expected_outputs, what=f"predict's outputs ({case.text()})"):
        assert_arguments_unchanged(impl, what=f"the model after predict ({case.text()}; put each "
                                              "module's own training flag back)")
    got = case.evaluate(impl)
    with anchored(lambda: outputs_of(got), case.expected_outputs, what=f"evaluate's outputs ({case.text()})"):
        assert_arguments_unchanged(impl, what=f"the model after evaluate ({case.text()}; put each "
                                              "module's own training flag back)")


@pytest.mark.weight(2)
@settings(max_examples=10)
@given(SEVERAL, st.data())
def test_modes_come_back_when_a_batch_raises(impl, case, data):
    """A batch one feature too wide, after at least one good one, makes the model's forward
    raise: the call raises, and every module is back in the mode it came in (a finally:)."""
    at = data.draw(st.integers(1, len(case.batches) - 1), label="bad batch at")
    width = case.batches[0][0].shape[1]
    bad_x = torch.ones(case.batches[at][0].shape[0], width + 1, dtype=torch.float64)
    model, batches = case.copies()
    inputs = [x for x, _ in batches]
    inputs[at] = bad_x
    where = f"batches[{at}] has {width + 1} features, the model takes {width}"
    with anchored(lambda: case.predict(impl), case.expected_outputs,
                  what=f"predict's outputs on the good batches ({case.text()})"):
        with expect_raises(Exception, when=where):
            impl.predict(model, inputs)
        assert_arguments_unchanged(impl, what=f"the model after predict raised ({case.text()}; {where}; "
                                              "restore every module's flag in a finally:)")
    model, batches = case.copies()
    batches[at] = (bad_x, batches[at][1])
    with anchored(lambda: outputs_of(case.evaluate(impl)), case.expected_outputs,
                  what=f"evaluate's outputs on the good batches ({case.text()})"):
        with expect_raises(Exception, when=where):
            impl.evaluate(model, batches, case.loss_name)
        assert_arguments_unchanged(impl, what=f"the model after evaluate raised ({case.text()}; {where}; "
                                              "restore every module's flag in a finally:)")


@settings(max_examples=10)
@given(eval_cases())
def test_one_forward_per_batch(impl, case):
    """A recorder on the model (it records in the grader, sandboxed too): one forward per batch,
    on that batch alone, in order."""
    for name in ("predict", "evaluate"):
        model, batches = case.copies()
        recorder = BatchSizes()
        model.register_forward_pre_hook(recorder)
        got = (impl.predict(model, [x for x, _ in batches]) if name == "predict"
               else impl.evaluate(model, batches, case.loss_name))
        with anchored(lambda got=got: outputs_of(got), case.expected_outputs,
                      what=f"{name}'s outputs ({case.text()})"):
            assert recorder.sizes, (f"{name} never ran forward the model it was given (a copy.deepcopy of "
                                    "it runs its own forwards); run the model itself once per batch")
            assert recorder.sizes == case.sizes(), (
                f"{name} ran the model forward on batches of {recorder.sizes} sample(s); with batches "
                f"of {case.sizes()} it must run once per batch, on that batch alone, in order")


@settings(max_examples=10)
@given(eval_cases())
def test_grad_mode_and_random_state_are_left_alone(impl, case):
    """Observed where the code runs (the worker, in the sandbox): autograd on afterwards (no
    torch.set_grad_enabled(False) left behind) and no random number drawn (Dropout in eval mode
    draws none)."""
    for name, call in (("predict", case.predict), ("evaluate", case.evaluate)):
        seen = len(impl.effects)
        got = call(impl)
        changed = list(impl.effects)[seen:]
        with anchored(lambda got=got: outputs_of(got), case.expected_outputs,
                      what=f"{name}'s outputs ({case.text()})"):
            assert not changed, (
                f"{name} ({case.text()}) changed {'; '.join(changed)}: use with torch.no_grad(), which "
                "switches autograd back on when it ends, and run the model in eval mode, where Dropout "
                "draws no random numbers")


@settings(max_examples=5)
@given(eval_cases())
def test_no_batch_raises_value_error(impl, case):
    model, _ = case.copies()
    with anchored(lambda: case.predict(impl), case.expected_outputs,
                  what=f"predict's outputs beside the error case ({case.text()})"):
        with expect_raises(ValueError, when="predict is given no batch"):
            impl.predict(model, [])
    with anchored(lambda: outputs_of(case.evaluate(impl)), case.expected_outputs,
                  what=f"evaluate's outputs beside the error case ({case.text()})"):
        with expect_raises(ValueError, when="evaluate is given no batch"):
            impl.evaluate(model, [], case.loss_name)


# ------------------------------------------------------------------ on the GPU

def check_on_device(impl, case: EvalCase, device: str) -> None:
    """float32 on ``device`` against float64 on the CPU from the same float32-representable
    weights and data: the outputs and the loss stay on the device, carry no graph, and the
    model comes back in its arrival modes."""
    rounded = EvalCase(copy.deepcopy(case.model).float().double(), case.modes, case.loss_name,
                       [(x.float().double(), y if y.dtype == torch.int64 else y.float().double())
                        for x, y in case.batches])
    model, batches = rounded.copies()
    model = model.to(device, torch.float32)
    batches = [(x.to(device, torch.float32), y.to(device) if y.dtype == torch.int64
                else y.to(device, torch.float32)) for x, y in batches]
    with full_float32():
        got = impl.evaluate(model, batches, case.loss_name)
    loss, outputs = check_pair(got, f"evaluate on {device} ({case.text()})")
    for name, t in (("the loss", loss), ("the outputs", outputs)):
        assert isinstance(t, torch.Tensor) and t.device.type == device, (
            f"{name} came back on {getattr(t, 'device', None)}; expected {device}, where the model is")
    assert_same(outputs.cpu().double(), rounded.expected_outputs(), rtol=1e-4, atol=1e-5,
                what=f"float32 outputs on {device} ({case.text()}), vs float64 on the CPU")
    assert_same(loss.cpu().double(), rounded.expected_loss(), rtol=1e-4, atol=1e-5,
                what=f"float32 loss on {device} ({case.text()}), vs float64 on the CPU")
    assert not outputs.requires_grad and not loss.requires_grad, (
        f"the outputs or the loss on {device} require grad: run the forwards under torch.no_grad()")
    assert_arguments_unchanged(impl, what=f"the model after evaluate on {device} ({case.text()})")


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=15)
@given(eval_cases())
def test_float32_on_gpu(impl, case):
    check_on_device(impl, case, "cuda")
