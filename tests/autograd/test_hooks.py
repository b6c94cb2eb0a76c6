"""Forward hooks: the outputs of named submodules captured in one forward (copies, so an
in-place layer after them cannot change them), and every hook removed afterwards, against
a forward run by hand through the submodules."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.contract.expect import assert_same
from tests.numerics import manual_seed
from tests.properties import assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, sampled

pytestmark = pytest.mark.exercise(points=10)

ACTIVATIONS = ("relu_inplace", "relu_inplace", "relu", "tanh", "hardtanh_inplace", "none")
ANY_ACTIVATION = sampled(ACTIVATIONS)


def activation(kind: str) -> nn.Module | None:
    return {"relu_inplace": lambda: nn.ReLU(inplace=True), "relu": nn.ReLU, "tanh": nn.Tanh,
            "hardtanh_inplace": lambda: nn.Hardtanh(-0.5, 0.5, inplace=True), "none": lambda: None}[kind]()


@dataclass
class Case:
    model: nn.Sequential
    batches: list[torch.Tensor]
    names: list[str]
    init_seed: int = 0  # torch.manual_seed before building the model (shown in counterexamples)

    @property
    def x(self) -> torch.Tensor:
        return self.batches[0]

    def text(self) -> str:
        return f"names {self.names} of {' '.join(str(self.model).split())}"

    def copies(self) -> tuple[nn.Module, torch.Tensor]:
        return copy.deepcopy(self.model), self.x.clone()


def by_hand(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every submodule's output, recorded as it is produced (a copy, before any later in-place
    layer runs), by walking the Sequential tree by hand: no hooks."""
    record: dict[str, torch.Tensor] = {}

    def run(module: nn.Module, h: torch.Tensor, name: str) -> torch.Tensor:
        if isinstance(module, nn.Sequential):
            for child_name, child in module.named_children():
                h = run(child, h, f"{name}.{child_name}" if name else child_name)
        else:
            h = module(h)
        record[name] = h.clone()
        return h

    with torch.no_grad():
        run(model, x.clone(), "")
    return record


def expected(case: Case, x: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    model, _ = case.copies()
    record = by_hand(model, case.x if x is None else x)
    return {name: record[name] for name in case.names}


def check_capture(got: object, want: dict[str, torch.Tensor], what: str) -> None:
    assert type(got) is dict, f"{what}: expected a dict {{name: activation}}, got {type(got).__name__}"
    assert sorted(got) == sorted(want), f"{what}: the keys are {sorted(got)}, expected the names {sorted(want)}"
    for name, tensor in want.items():
        assert_same(got[name], tensor, what=f"{what}: the output of submodule {name!r}")


@st.composite
def cases(draw, after_linear=ANY_ACTIVATION, max_batches: int = 1) -> Case:
    seed = draw(st.integers(0, 2**16), label="init seed")
    n_in = draw(st.integers(1, 3), label="in")
    widths = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="widths")
    kinds = [draw(after_linear, label=f"after Linear {i}") for i in range(len(widths))]
    nest = draw(st.booleans(), label="last block nested")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        layers: list[nn.Module] = []
        d = n_in
        for i, (width, kind) in enumerate(zip(widths, kinds)):
            block = [nn.Linear(d, width)] + [m for m in [activation(kind)] if m is not None]
            d = width
            if nest and i == len(widths) - 1 and len(block) > 1:
                layers.append(nn.Sequential(*block))  # names "k.0", "k.1"
            else:
                layers.extend(block)
        model = nn.Sequential(*layers).double()
    all_names = tuple(name for name, _ in model.named_modules())
    names = draw(st.lists(sampled(all_names), min_size=1, max_size=3, unique=True), label="names")
    batch = draw(st.integers(1, 3), label="batch size")
    count = draw(st.integers(min(2, max_batches), max_batches), label="batches")
    batches = [draw(float_tensors((batch, n_in), low=-2, high=2), label=f"batch {i}") for i in range(count)]
    return Case(model, batches, names, seed)


def spec_case() -> Case:
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(inplace=True), nn.Linear(2, 1))
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(2))
        model[0].bias.zero_()
    return Case(model, [torch.tensor([[1.0, -1.0]]), torch.tensor([[2.0, 3.0]])], ["0", "1"])


@pytest.mark.weight(4)
@settings(max_examples=40)
@example(spec_case())
@given(cases())
def test_activations_match_a_forward_by_hand(impl, case):
    model, x = case.copies()
    check_capture(impl.capture_activations(model, x, list(case.names)), expected(case),
                  f"capture_activations ({case.text()})")


@pytest.mark.weight(2)
@settings(max_examples=25)
@example(spec_case())
@given(cases(after_linear=st.just("relu_inplace")))
def test_an_inplace_layer_after_a_hooked_one_changes_nothing(impl, case):
    """Every Linear is followed by ReLU(inplace=True), which overwrites the Linear's output
    after its hook has run: a captured reference shows the ReLU's values, a copy the Linear's."""
    linears = [name for name, m in case.model.named_modules() if isinstance(m, nn.Linear)]
    case.names = list(dict.fromkeys([linears[0], *case.names]))
    model, x = case.copies()
    check_capture(impl.capture_activations(model, x, list(case.names)), expected(case),
                  f"capture_activations with in-place ReLUs ({case.text()}): keep a copy of each output")


@pytest.mark.weight(2)
@settings(max_examples=25)
@example(spec_case())
@given(cases(max_batches=3))
def test_hooks_are_removed_after_each_capture(impl, case):
    """Several batches in turn: a hook left on the model from an earlier capture keeps writing
    the later batches' activations into the earlier dicts."""
    model, _ = case.copies()
    got = impl.capture_batches(model, [x.clone() for x in case.batches], list(case.names))
    assert type(got) is list and len(got) == len(case.batches), (
        f"capture_batches returned {type(got).__name__} of length {len(got) if isinstance(got, list) else '?'}; "
        f"expected a list of {len(case.batches)} dicts, one per batch")
    for i, (captured, x) in enumerate(zip(got, case.batches)):
        check_capture(captured, expected(case, x), f"capture_batches: the dict of batch {i} of "
                      f"{len(case.batches)} ({case.text()}; remove every hook once its forward is done)")


@settings(max_examples=15)
@given(cases())
def test_model_and_x_are_left_alone(impl, case):
    """The model's parameters, their .grad, its training mode and x come back unchanged,
    and the same call's activations are right."""
    model, x = case.copies()
    got = impl.capture_activations(model, x, list(case.names))
    assert_arguments_unchanged(impl, what="the model and x after capture_activations")
    assert_ordinary(lambda: got, lambda: expected(case), what=f"the same call's activations ({case.text()})",
                    compare=check_capture)


@settings(max_examples=15)
@given(cases())
def test_activations_are_detached(impl, case):
    """Plain copies: no activation requires grad (a graph would keep the whole forward alive)."""
    model, x = case.copies()
    got = impl.capture_activations(model, x, list(case.names))
    assert type(got) is dict, f"expected a dict, got {type(got).__name__}"
    attached = [name for name, t in got.items() if isinstance(t, torch.Tensor) and t.requires_grad]
    assert not attached, (f"the activations of {attached} require grad: store output.detach().clone() "
                          "(or run the forward under torch.no_grad())")
    assert_ordinary(lambda: got, lambda: expected(case), what=f"the same call's activations ({case.text()})",
                    compare=check_capture)
