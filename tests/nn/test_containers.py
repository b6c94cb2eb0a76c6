"""Containers: a stack of n layers that share no tensor (deep copies, ties inside a layer kept),
parameters counted once however many names reach them, and freezing by whole-name prefix;
against a Sequential of deep copies, distinct storages, sum(p.numel() for p in parameters())
and named_parameters(remove_duplicate=False).

Every module is built from torch.nn classes, so it crosses the sandbox as it is, identity
included: a layer put in two slots comes back as one object, a tied weight stays tied.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import assert_same, expect_raises
from tests.numerics import manual_seed
from tests.properties import anchored, harder_than
from tests.strategies import float_tensors, sampled

WALK = ("walk model.named_modules(remove_duplicate=False) and each module's _parameters yourself, "
        "remembering the ids of the parameters you have met")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.nn.Module.parameters": WALK,
    "torch.nn.Module.named_parameters": WALK,
    "torch.nn.Module._named_members": WALK,
    "torch.nn.Module.state_dict": WALK,  # keep_vars=True hands over the parameters, named
    "torch.nn.Module.requires_grad_": "set p.requires_grad = False on each parameter you find",
    "torch.nn.modules.transformer._get_clones": "deep-copy the layer once per slot (copy.deepcopy)",
}, mutates={"freeze": ("modules",)})

# The grader's own walks, through nn.Module's methods (not a returned module's attributes).
named_parameters = nn.Module.named_parameters
named_buffers = nn.Module.named_buffers


def every_parameter(model: nn.Module) -> list[tuple[str, nn.Parameter]]:
    return list(named_parameters(model, remove_duplicate=False))


def tensors_of(model: nn.Module) -> list[tuple[str, torch.Tensor]]:
    return [*named_parameters(model), *named_buffers(model)]


def storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def plain(module: nn.Module) -> str:
    return " ".join(str(module).split())


# ------------------------------------------------------------------ stack_layers

LAYERS = ("linear", "frozen_bias", "mlp", "norm_block", "tied_module", "tied_weight")
TIED = ("tied_module", "tied_weight")


def make_layer(kind: str, d: int) -> nn.Module:
    """A square layer of width ``d`` (float64), so that copies of it stack."""
    f64 = dict(dtype=torch.float64)
    if kind == "linear":
        return nn.Linear(d, d, **f64)
    if kind == "frozen_bias":
        lin = nn.Linear(d, d, **f64)
        lin.bias.requires_grad_(False)
        return lin
    if kind == "mlp":
        return nn.Sequential(nn.Linear(d, d, **f64), nn.Tanh(), nn.Linear(d, d, bias=False, **f64))
    if kind == "norm_block":  # buffers, in eval mode (the running statistics are used)
        bn = nn.BatchNorm1d(d, **f64)
        with torch.no_grad():
            bn.running_mean.normal_()
            bn.running_var.uniform_(0.5, 2.0)
        return nn.Sequential(nn.Linear(d, d, **f64), bn, nn.LayerNorm(d, **f64)).eval()
    if kind == "tied_module":  # one Linear used twice
        lin = nn.Linear(d, d, **f64)
        return nn.Sequential(lin, nn.Tanh(), lin)
    first, second = nn.Linear(d, d, **f64), nn.Linear(d, d, **f64)  # one weight, two biases
    second.weight = first.weight
    return nn.Sequential(first, nn.ReLU(), second)


@dataclass
class StackCase:
    kind: str
    d: int
    n: int
    seed: int
    x: torch.Tensor
    layer: nn.Module = field(init=False, repr=False)

    def __post_init__(self) -> None:
        with torch.random.fork_rng(devices=[]):
            manual_seed(self.seed)
            self.layer = make_layer(self.kind, self.d)

    @functools.cached_property
    def _layer_text(self) -> str:
        return plain(self.layer)

    def text(self) -> str:
        return f"stack_layers({self._layer_text}, {self.n})"

    def expected(self) -> nn.Sequential:
        return nn.Sequential(*[copy.deepcopy(self.layer) for _ in range(self.n)])


@st.composite
def stack_cases(draw, kinds: tuple[str, ...] = LAYERS, min_n: int = 0) -> StackCase:
    d = draw(st.integers(1, 3), label="width")
    return StackCase(draw(sampled(kinds), label="layer"), d, draw(st.integers(min_n, 4), label="n"),
                     draw(st.integers(0, 2**16), label="init seed"),
                     draw(float_tensors((draw(st.integers(1, 3), label="batch"), d), low=-2, high=2), label="x"))


def check_stack(got: object, case: StackCase) -> None:
    """A Sequential of n slots, each like ``layer`` (class, parameters and buffers by name with
    their values and flags, training mode), running like the oracle's deep copies: the ordinary
    comparison every stack_layers property rides with."""
    what = case.text()
    assert type(got) is nn.Sequential, f"{what} returned a {type(got).__name__}; expected an nn.Sequential"
    assert len(got) == case.n, f"{what} holds {len(got)} layers; expected {case.n}"
    want = dict(tensors_of(case.layer))
    for i, slot in enumerate(got):
        assert type(slot) is type(case.layer), (
            f"{what}: slot {i} is a {type(slot).__name__}, the layer a {type(case.layer).__name__}")
        have = dict(tensors_of(slot))
        assert list(have) == list(want), f"{what}: slot {i} holds {list(have)}, the layer {list(want)}"
        for name, tensor in want.items():
            assert_same(have[name].detach(), tensor.detach(), what=f"{what}: slot {i}'s {name}")
            assert have[name].requires_grad == tensor.requires_grad, (
                f"{what}: slot {i}'s {name} has requires_grad={have[name].requires_grad}, the layer's "
                f"{tensor.requires_grad}")
        modes = [m.training for m in slot.modules()]
        assert modes == [m.training for m in case.layer.modules()], (
            f"{what}: slot {i}'s training modes are {modes}; copy the layer as it is")
    with torch.no_grad():
        assert_same(got(case.x.clone()), case.expected()(case.x.clone()),
                    what=f"{what} applied to x; expected the layers one after the other")


SPEC_STACK = StackCase("linear", 2, 3, 0, torch.tensor([[1.0, -1.0]], dtype=torch.float64))


@pytest.mark.weight(3)
@settings(max_examples=20)
@example(SPEC_STACK)
@given(stack_cases())
def test_the_stack_runs_like_a_sequential_of_deep_copies(impl, case):
    """n slots, each with the layer's class, values, flags and mode, applied one after the other."""
    check_stack(impl.stack_layers(case.layer, case.n), case)


@pytest.mark.weight(3)
@settings(max_examples=20)
@example(SPEC_STACK)
@given(stack_cases(min_n=1))
def test_no_two_layers_share_a_tensor(impl, case):
    """Distinct storages: no slot shares a parameter or buffer with another slot, or with the layer."""
    got = impl.stack_layers(case.layer, case.n)
    what = case.text()
    with anchored(lambda: check_stack(got, case)):
        assert isinstance(got, nn.Module), f"{what} returned a {type(got).__name__}"
        owners: dict[int, str] = {storage(t): f"the layer's {name}" for name, t in tensors_of(case.layer)}
        for i, slot in enumerate(got._modules.values()):  # every slot (children() skips repeats)
            if slot is case.layer:
                raise AssertionError(
                    f"{what}: slot {i} is the layer itself; the notes' ModuleList([layer for _ in "
                    "range(n)]) holds one layer n times. Deep-copy it for every slot")
            mine: set[int] = set()
            for name, t in tensors_of(slot):
                if storage(t) in owners and storage(t) not in mine:
                    raise AssertionError(
                        f"{what}: slot {i}'s {name} is {owners[storage(t)]}, the same memory: one "
                        "optimizer step would move both. Deep-copy the layer for every slot")
                mine.add(storage(t))
            owners.update({p: f"slot {i}'s tensor" for p in mine})


@settings(max_examples=20)
@given(stack_cases(TIED, min_n=1))
def test_each_copy_keeps_the_ties_inside_the_layer(impl, case):
    """A layer that uses one Linear twice, or ties two weights: in every slot the same names
    share one tensor, as in the layer (and only those)."""
    got = impl.stack_layers(case.layer, case.n)
    what = case.text()

    def pattern(module: nn.Module) -> list[int]:
        first: dict[int, int] = {}
        return [first.setdefault(id(p), i) for i, (_, p) in enumerate(every_parameter(module))]

    with anchored(lambda: check_stack(got, case)):
        assert isinstance(got, nn.Module), f"{what} returned a {type(got).__name__}"
        for i, slot in enumerate(got._modules.values()):  # every slot (children() skips repeats)
            assert pattern(slot) == pattern(case.layer), (
                f"{what}: slot {i} ties its parameters as {pattern(slot)}, the layer as "
                f"{pattern(case.layer)} (each entry: the first position of the same tensor); copy the "
                "whole layer with copy.deepcopy, which keeps its ties")


@settings(max_examples=15)
@given(stack_cases(), st.integers(-3, -1))
def test_a_negative_count_raises_value_error(impl, case, n):
    with anchored(lambda: check_stack(impl.stack_layers(case.layer, case.n), case)):
        with expect_raises(ValueError, when=f"n = {n}"):
            impl.stack_layers(case.layer, n)


# ------------------------------------------------------------------ models to count and freeze

LEAVES = ("linear", "linear_no_bias", "batch_norm", "layer_norm", "embedding", "relu", "block")
NAMES = ("encoder", "decoder", "head", "embed", "norm", "out")
# pairs where one name is the start of the other: a prefix must match whole names
LOOKALIKES = (("layer1", "layer10"), ("enc", "encoder"), ("head", "head_proj"), ("block", "block_2"))
SHARES = ("a module", "a weight", "the notes' stack")


def make_leaf(kind: str, d: int) -> nn.Module:
    f64 = dict(dtype=torch.float64)
    if kind == "linear":
        return nn.Linear(d, d, **f64)
    if kind == "linear_no_bias":
        return nn.Linear(d, d, bias=False, **f64)
    if kind == "batch_norm":
        return nn.BatchNorm1d(d, **f64)
    if kind == "layer_norm":
        return nn.LayerNorm(d, **f64)
    if kind == "embedding":
        return nn.Embedding(3, d, **f64)
    if kind == "relu":
        return nn.ReLU()
    return nn.Sequential(nn.Linear(d, d, **f64), nn.ReLU(), nn.Linear(d, d, **f64))


@dataclass(frozen=True)
class ModelRecipe:
    """How to build a model (each call of ``build`` makes a fresh one, the same every time)."""

    seed: int
    d: int
    children: tuple[tuple[str, str], ...]  # (name, leaf kind) in a ModuleDict
    share: str = "nothing"  # or one of SHARES
    frozen: tuple[str, ...] = ()  # parameter names frozen before the call

    def build(self) -> nn.ModuleDict:
        with torch.random.fork_rng(devices=[]):
            manual_seed(self.seed)
            model = nn.ModuleDict([(name, make_leaf(kind, self.d)) for name, kind in self.children])
            if self.share == "a module":
                model["shared"] = nn.Linear(self.d, self.d, dtype=torch.float64)
                model["again"] = model["shared"]
            elif self.share == "a weight":
                model["tied_a"] = nn.Linear(self.d, self.d, dtype=torch.float64)
                model["tied_b"] = nn.Linear(self.d, self.d, dtype=torch.float64)
                model["tied_b"].weight = model["tied_a"].weight
            elif self.share == "the notes' stack":
                lin = nn.Linear(self.d, self.d, dtype=torch.float64)
                model["stack"] = nn.ModuleList([lin for _ in range(3)])
        for name, p in named_parameters(model, remove_duplicate=False):
            if name in self.frozen:
                p.requires_grad = False
        return model

    @functools.cached_property
    def _model_text(self) -> str:
        return plain(self.build())

    def text(self) -> str:
        model, frozen = self._model_text, list(self.frozen)  # a module's repr is dear: once per recipe
        if self.share == "nothing":
            return f"{model} (seed {self.seed}, {frozen} frozen before)" if frozen else f"{model} (seed {self.seed})"
        if frozen:
            return f"{model} (seed {self.seed}, sharing {self.share}, {frozen} frozen before)"
        return f"{model} (seed {self.seed}, sharing {self.share})"


@st.composite
def recipes(draw, share: bool = False, frozen: bool = False, lookalike: bool = False,
            min_frozen: int = 0) -> ModelRecipe:
    seed = draw(st.integers(0, 2**16), label="init seed")
    d = draw(st.integers(1, 3), label="width")
    count = draw(st.integers(1, 3), label="children")
    names = list(draw(st.lists(sampled(NAMES), min_size=count, max_size=count, unique=True), label="names"))
    kinds = [draw(sampled(LEAVES), label=f"layer {name}") for name in names]
    if set(kinds) == {"relu"}:  # a parameter to count and to freeze, always
        kinds[0] = "linear"
    if lookalike:
        short, long = draw(sampled(LOOKALIKES), label="look-alike names")
        names = [n for n in names if n not in (short, long)] + [short, long]
        kinds = kinds[:len(names) - 2] + [draw(sampled(("linear", "block")), label=f"layer {n}")
                                          for n in (short, long)]
    recipe = ModelRecipe(seed, d, tuple(zip(names, kinds)),
                         draw(sampled(SHARES), label="shared") if share else "nothing")
    if frozen:
        every = tuple(name for name, _ in every_parameter(recipe.build()))
        if len(every) >= min_frozen:
            chosen = draw(st.lists(sampled(every), min_size=min_frozen, max_size=3, unique=True),
                          label="frozen before")
            recipe = ModelRecipe(seed, d, recipe.children, recipe.share, tuple(chosen))
    return recipe


def parameters_of(model: nn.Module) -> list[nn.Parameter]:
    seen: dict[int, nn.Parameter] = {}
    for _, p in every_parameter(model):
        seen.setdefault(id(p), p)
    return list(seen.values())


# ------------------------------------------------------------------ count_parameters

def expected_count(model: nn.Module, trainable_only: bool) -> int:
    return sum(p.numel() for p in parameters_of(model) if p.requires_grad or not trainable_only)


def check_count(impl, recipe: ModelRecipe, trainable_only: bool, spelled: bool = True) -> None:
    model = recipe.build()
    kwargs = {"trainable_only": trainable_only} if spelled or trainable_only else {}
    what = (f"count_parameters of {recipe.text()}, trainable_only={trainable_only}" if kwargs
            else f"count_parameters of {recipe.text()} (trainable_only left out: the default)")
    got = impl.count_parameters(model, **kwargs)
    assert type(got) is int, f"{what} returned a {type(got).__name__}; expected a Python int"
    assert_same(got, expected_count(model, trainable_only), what=what)


@pytest.mark.weight(3)
@settings(max_examples=25)
@given(recipes(frozen=True), st.booleans(), st.booleans())
def test_counts_every_parameter_element(impl, recipe, trainable_only, spelled):
    """The sum of numel over the model's parameters (not its buffers, nor None entries)."""
    check_count(impl, recipe, trainable_only, spelled)


# The spec's examples: one Linear(2, 2) used twice counts 6; a Linear(2, 2) with its bias frozen
# beside a BatchNorm1d(2) counts 4 + 2 + 2 trainable elements.
SPEC_SHARED = ModelRecipe(0, 2, (("encoder", "relu"),), share="a module")
SPEC_FROZEN = ModelRecipe(0, 2, (("encoder", "linear"), ("norm", "batch_norm")), frozen=("encoder.bias",))


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(SPEC_SHARED, SPEC_FROZEN, False)
@given(recipes(share=True), recipes(), st.booleans())
def test_a_shared_parameter_counts_once(impl, shared, ordinary, spelled):
    """A module used twice, a tied weight, the notes' ModuleList([layer] * 3): each tensor once."""
    with harder_than(lambda: check_count(impl, ordinary, False, spelled)):
        check_count(impl, shared, False, spelled)


@settings(max_examples=20)
@example(SPEC_FROZEN, False)
@given(recipes(frozen=True, share=True, min_frozen=1), st.booleans())
def test_trainable_only_leaves_frozen_parameters_out(impl, recipe, spelled):
    """A model with a frozen parameter, counted with trainable_only=True: only the parameters
    that require grad (and, as the ordinary comparison, all of them)."""
    with anchored(lambda: check_count(impl, recipe, False, spelled)):
        check_count(impl, recipe, True)


# ------------------------------------------------------------------ freeze

@dataclass(frozen=True)
class FreezeCase:
    recipe: ModelRecipe
    prefixes: tuple[str, ...]


def prefix_pool(recipe: ModelRecipe) -> tuple[str, ...]:
    """Every prefix that names a parameter: a parameter's whole name, or its start up to a dot."""
    starts: list[str] = []
    for name, _ in every_parameter(recipe.build()):
        parts = name.split(".")
        starts += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return tuple(dict.fromkeys(starts))


SECOND_NAMES = {"a module": ("again", "again.weight"), "a weight": ("tied_b", "tied_b.weight"),
                "the notes' stack": ("stack.1", "stack.2", "stack.2.weight")}


@st.composite
def freeze_cases(draw, share: bool = False, frozen: bool = False, lookalike: bool = False) -> FreezeCase:
    """A model and prefixes that name at least one of its parameters. ``lookalike``: the shorter
    of two look-alike sibling names; ``share``: a second name of a shared parameter."""
    recipe = draw(recipes(share=share, frozen=frozen, lookalike=lookalike))
    if lookalike:
        prefixes = [recipe.children[-2][0]]
    elif share:
        prefixes = [draw(sampled(SECOND_NAMES[recipe.share]), label="a second name")]
    else:
        pool = prefix_pool(recipe)
        prefixes = list(draw(st.lists(sampled(pool), min_size=1, max_size=2, unique=True), label="prefixes"))
    return FreezeCase(recipe, tuple(prefixes))


def expected_flags(case: FreezeCase) -> dict[str, bool]:
    """requires_grad of every parameter name after freezing: False under a prefix (any of the
    parameter's names), as it was otherwise."""
    model = case.recipe.build()
    under = {id(p) for name, p in every_parameter(model)
             if any(name == pre or name.startswith(pre + ".") for pre in case.prefixes)}
    return {name: p.requires_grad and id(p) not in under for name, p in every_parameter(model)}


def check_freeze(impl, case: FreezeCase) -> None:
    """Freeze a fresh model; its flags, by name, must be the oracle's (the ordinary comparison
    every freeze property rides with)."""
    model = case.recipe.build()
    got = impl.freeze(model, list(case.prefixes))
    what = f"freeze(model, {list(case.prefixes)}) for {case.recipe.text()}"
    assert got is None, f"{what} returned {type(got).__name__}; freeze changes the model and returns None"
    want = expected_flags(case)
    have = {name: p.requires_grad for name, p in every_parameter(model)}
    wrong = [name for name in want if have.get(name) != want[name]]
    assert not wrong, (
        f"{what}: requires_grad is {[have.get(n) for n in wrong]} for {wrong}, expected "
        f"{[want[n] for n in wrong]}")


SPEC_FREEZE = FreezeCase(ModelRecipe(0, 2, (("layer1", "linear"), ("layer10", "linear"))), ("layer1",))


@pytest.mark.weight(3)
@settings(max_examples=25)
@example(SPEC_FREEZE)
@given(freeze_cases())
def test_freezes_exactly_the_parameters_under_a_prefix(impl, case):
    """requires_grad False on the parameters a prefix names (a module's or a parameter's
    qualified name), True on the others."""
    check_freeze(impl, case)


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(SPEC_FREEZE, FreezeCase(ModelRecipe(0, 1, (("head", "linear"),)), ("head",)))
@given(freeze_cases(lookalike=True), freeze_cases())
def test_a_prefix_matches_whole_names_only(impl, case, ordinary):
    """Siblings layer1 and layer10, enc and encoder, head and head_proj: the shorter name freezes
    its own module's parameters, never its look-alike's."""
    with harder_than(lambda: check_freeze(impl, ordinary)):
        check_freeze(impl, case)


FROZEN_BEFORE = FreezeCase(ModelRecipe(0, 2, (("encoder", "linear"), ("head", "linear")),
                                       frozen=("encoder.bias",)), ("head",))


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(FROZEN_BEFORE)
@given(freeze_cases(frozen=True))
def test_other_parameters_keep_their_flag(impl, case):
    """Parameters frozen before the call and under no prefix stay frozen; the others stay
    trainable."""
    check_freeze(impl, case)


@settings(max_examples=20)
@given(freeze_cases(share=True), freeze_cases())
def test_a_shared_parameter_is_frozen_under_any_of_its_names(impl, case, ordinary):
    """A prefix that names the second place of a shared module, of a tied weight or of a slot of
    the notes' ModuleList([layer] * 3) freezes that parameter, wherever else it appears."""
    with harder_than(lambda: check_freeze(impl, ordinary)):
        check_freeze(impl, case)


@settings(max_examples=20)
@given(freeze_cases(frozen=True))
def test_only_requires_grad_changes(impl, case):
    """The same Parameter objects stay in place with their values, every module keeps its
    training mode (freezing is not eval()), its buffers and which of them a checkpoint
    holds."""
    model = case.recipe.build()
    before = [(name, p, p.detach().clone()) for name, p in every_parameter(model)]
    modes = [(name, m.training) for name, m in model.named_modules(remove_duplicate=False)]
    buffers = buffer_layout(model)
    what = f"freeze(model, {list(case.prefixes)}) for {case.recipe.text()}"
    impl.freeze(model, list(case.prefixes))
    with anchored(lambda: check_freeze(impl, case)):
        after = dict(every_parameter(model))
        for name, p, value in before:
            assert after.get(name) is p, (
                f"{what}: {name} is no longer the model's Parameter (replaced by a new one): an "
                "optimizer holding the old one would not see the change. Set p.requires_grad on it")
            assert_same(p.detach(), value, what=f"{what}: the values of {name}")
        now = [(name, m.training) for name, m in model.named_modules(remove_duplicate=False)]
        assert now == modes, (f"{what} changed the training mode of {[n for (n, a), (_, b) in zip(modes, now) if a != b]}"
                              ": freezing is not model.eval()")
        assert buffer_layout(model) == buffers, (
            f"{what} changed the model's buffers (added, removed, replaced, or kept in or out of its "
            "state_dict): freezing changes requires_grad only")


def buffer_layout(model: nn.Module) -> list[tuple[str, int, bool]]:
    """Each buffer by name, the tensor itself, and whether the model's state_dict holds it."""
    return [(f"{prefix}.{name}".lstrip("."), id(b), name not in m._non_persistent_buffers_set)
            for prefix, m in model.named_modules(remove_duplicate=False) for name, b in m._buffers.items()]
