"""Forward hooks: the outputs of named submodules captured in one forward (copies, so an
in-place layer after them cannot change them), in the order of the names, and every hook
removed afterwards (also when the forward raises), against a forward run by hand through
the submodules. Each property judges its own claim: its oracle anchor compares the
activations by name, whatever order the dict holds them in."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import BatchSizes, assert_same, expect_raises
from tests.numerics import manual_seed
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
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
    """The activations by name: the right keys and values, in whatever order (the order of
    the keys is test_the_dict_follows_the_order_of_names' claim alone)."""
    assert type(got) is dict, f"{what}: expected a dict {{name: activation}}, got {type(got).__name__}"
    assert sorted(got) == sorted(want), f"{what}: the keys are {sorted(got)}, expected the names {sorted(want)}"
    for name, tensor in want.items():
        assert_same(got[name], tensor, what=f"{what}: the output of submodule {name!r}")


def hook_tables(model: nn.Module) -> dict[str, tuple[int, int]]:
    """How many forward hooks and forward pre-hooks each module of ``model`` holds. In the
    sandbox a hook the call left on the worker's copy stands on the grader's module as an
    inert stand-in (``grader.sandbox.wire.LeftBehind``), so the same tables are read."""
    return {name: (len(m._forward_hooks), len(m._forward_pre_hooks)) for name, m in model.named_modules()}


def check_hooks_removed(model: nn.Module, before: dict[str, tuple[int, int]], what: str) -> None:
    """No table holds more entries than it did before the call."""
    after = hook_tables(model)
    left = [name or "the model" for name, (hooks, pre_hooks) in after.items()
            if hooks > before.get(name, (0, 0))[0] or pre_hooks > before.get(name, (0, 0))[1]]
    assert not left, (f"{what}: hooks are still registered on {left} after the call; keep every handle "
                      "and call handle.remove() on each in a finally: block")


@st.composite
def cases(draw, after_linear=ANY_ACTIVATION, max_batches: int = 1, min_names: int = 1) -> Case:
    seed = draw(st.integers(0, 2**16), label="init seed")
    n_in = draw(st.integers(1, 3), label="in")
    widths = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="widths")
    kinds = [draw(after_linear, label=f"after Linear {i}") for i in range(len(widths))]
    nest = draw(st.booleans(), label="last block nested")
    # An Identity first hands x itself to its hook; Unflatten then Flatten at the end each
    # return a view of their input: outputs a hook may not change in place (detach_()).
    identity_first = draw(st.booleans(), label="an Identity first")
    views_last = draw(st.booleans(), label="Unflatten, Flatten last")
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        layers: list[nn.Module] = [nn.Identity()] if identity_first else []
        d = n_in
        for i, (width, kind) in enumerate(zip(widths, kinds)):
            block = [nn.Linear(d, width)] + [m for m in [activation(kind)] if m is not None]
            d = width
            if nest and i == len(widths) - 1 and len(block) > 1:
                layers.append(nn.Sequential(*block))  # names "k.0", "k.1"
            else:
                layers.extend(block)
        if views_last:
            layers.extend([nn.Unflatten(1, (d, 1)), nn.Flatten(1)])
        model = nn.Sequential(*layers).double()
    all_names = tuple(name for name, _ in model.named_modules())
    names = draw(st.lists(sampled(all_names), min_size=min(min_names, len(all_names)), max_size=3, unique=True),
                 label="names")
    batch = draw(st.integers(1, 3), label="batch size")
    count = draw(st.integers(min(2, max_batches), max_batches), label="batches")
    batches = [draw(float_tensors((batch, n_in), low=-2, high=2), label=f"batch {i}") for i in range(count)]
    return Case(model, batches, names, seed)


def spec_case(names: tuple[str, ...] = ("0", "1")) -> Case:
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(inplace=True), nn.Linear(2, 1))
    with torch.no_grad():
        model[0].weight.copy_(torch.eye(2))
        model[0].bias.zero_()
    return Case(model, [torch.tensor([[1.0, -1.0]]), torch.tensor([[2.0, 3.0]])], list(names))


def pass_through_case(names: tuple[str, ...] = ("0", "4", "5")) -> Case:
    """The spec's model between an Identity (whose output is x itself) and Unflatten, Flatten
    (whose outputs are views of their inputs)."""
    case = spec_case()
    case.model = nn.Sequential(nn.Identity(), *case.model, nn.Unflatten(1, (1, 1)), nn.Flatten(1))
    case.names = list(names)
    return case


def same_call(got: object, case: Case, what: str = "the same call's activations") -> None:
    """The oracle anchor: this call's activations, compared by name."""
    assert_ordinary(lambda: got, lambda: expected(case), what=f"{what} ({case.text()})", compare=check_capture)


@pytest.mark.weight(4)
@settings(max_examples=40)
@example(spec_case())
@example(pass_through_case())
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
def test_each_batch_gets_its_own_activations(impl, case):
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


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(spec_case())
@given(cases())
def test_hooks_are_removed_after_each_capture(impl, case):
    """After the call no module of the model holds more forward hooks or pre-hooks than it did
    before (the model arrives with a hook of its own: that one stays), whatever the answer
    returns; and the same call's activations are right."""
    model, x = case.copies()
    model.register_forward_pre_hook(BatchSizes())  # the model's own hook, not the answer's to remove
    before = hook_tables(model)
    got = impl.capture_activations(model, x, list(case.names))
    check_hooks_removed(model, before, f"capture_activations ({case.text()})")
    same_call(got, case)


@settings(max_examples=15)
@example(spec_case())
@given(cases())
def test_hooks_are_removed_when_the_forward_raises(impl, case):
    """A Linear of the wrong width at the end of the model makes its forward raise after the
    earlier hooks fired: the call raises, and no hook stays behind (remove them in a finally:).
    Beside it, an ordinary capture on the model without that layer."""
    model, x = case.copies()
    width = by_hand(model, x)[""].shape[1]
    model.append(nn.Linear(width + 1, 2).double())  # fed `width` features: the forward raises
    before = hook_tables(model)
    with anchored(lambda: impl.capture_activations(*case.copies(), list(case.names)), lambda: expected(case),
                  what=f"an ordinary capture beside it ({case.text()})", compare=check_capture):
        with expect_raises(Exception, when=f"the model's last layer, a Linear({width + 1}, 2), is fed "
                                           f"{width} features"):
            impl.capture_activations(model, x, list(case.names))
        check_hooks_removed(model, before, f"capture_activations on a model whose forward raises "
                                           f"({case.text()} and a Linear({width + 1}, 2) after it)")


@settings(max_examples=15)
@example(spec_case())
@given(cases())
def test_the_model_runs_forward_once_per_capture(impl, case):
    """Every module of the model counts its forward calls (a recorder that records in the
    grader, sandboxed too): one capture is one forward of the model, so each runs once."""
    model, x = case.copies()
    recorders = {name: BatchSizes() for name, _ in model.named_modules()}
    for name, module in model.named_modules():
        module.register_forward_pre_hook(recorders[name])
    got = impl.capture_activations(model, x, list(case.names))
    wrong = {name or "the model": len(r.sizes) for name, r in recorders.items() if len(r.sizes) != 1}
    assert not wrong, (f"capture_activations ({case.text()}): forward calls per module {wrong}; "
                       "run model(x) exactly once, so that every module runs forward once")
    same_call(got, case)


@settings(max_examples=15)
@example(spec_case(("1", "0")))
@given(cases(min_names=2))
def test_the_dict_follows_the_order_of_names(impl, case):
    """The dict's keys come in the order of ``names``, not in the order the hooks fired."""
    model, x = case.copies()
    got = impl.capture_activations(model, x, list(case.names))
    with anchored(lambda: got, lambda: expected(case), what=f"the same call's activations ({case.text()})",
                  compare=check_capture):
        assert type(got) is dict, f"expected a dict, got {type(got).__name__}"
        assert list(got) == list(case.names), (
            f"capture_activations ({case.text()}): the keys come in the order {list(got)}; expected "
            f"the order of names, {list(case.names)}")


@settings(max_examples=15)
@example(pass_through_case(("0",)))
@given(cases())
def test_model_and_x_are_left_alone(impl, case):
    """The model's parameters, their .grad, its training mode and x (a leaf that requires
    grad: an Identity's hook is handed x itself) come back unchanged, and the same call's
    activations are right."""
    model, x = case.copies()
    x.requires_grad_()
    got = impl.capture_activations(model, x, list(case.names))
    assert_arguments_unchanged(impl, what="the model and x after capture_activations")
    assert_ordinary(lambda: same_call(got, case))


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
    same_call(got, case)
