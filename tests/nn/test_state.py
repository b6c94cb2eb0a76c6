"""A model's state by hand: a mask registered as a buffer (persistent or not) on a deep copy of a
module, a model's tensors split into parameters and buffers, and a wrapper's prefix taken off a
checkpoint's keys; against named_parameters, named_buffers and state_dict.

Every module here is built from torch.nn classes, so it crosses the sandbox as it is (class,
settings, parameters, buffers and which of them are persistent, submodules; identity kept, so a
tied weight stays tied). One fact does not cross it: a buffer a call adds to a module it was
sent. So masked_copy returns a new module and the checkpoint of it (what persistence changes).
Some inputs hold a non-persistent buffer, which split_state lists and state_dict() leaves out.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn

from grader.testing import as_tuple, assert_same
from tests.numerics import manual_seed
from tests.properties import anchored, assert_ordinary, assert_ordinary_answer, harder_than
from tests.strategies import float_tensors, int_tensors, sampled

WALK = ("walk model.named_modules() and read each module's _parameters and _buffers yourself: "
        "skip None entries and a tensor already seen")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.nn.Module.named_parameters": WALK,
    "torch.nn.Module.parameters": WALK,
    "torch.nn.Module.named_buffers": WALK,
    "torch.nn.Module.buffers": WALK,
    "torch.nn.Module._named_members": WALK,
    "torch.nn.modules.utils.consume_prefix_in_state_dict_if_present":
        "check that every key starts with the prefix, then build a new dict of the shortened keys",
})

# The grader's own walks, through nn.Module's methods (not a returned module's attributes).
named_parameters = nn.Module.named_parameters
named_buffers = nn.Module.named_buffers


# ------------------------------------------------------------------ models

# Submodule names. "module" and its look-alikes only where a property asks for them; names
# that start with a letter of "module." catch key.lstrip("module.").
PLAIN_NAMES = ("encoder", "head", "layers", "decoder", "out", "norm", "embed")
MODULE_NAMES = ("module", "submodule", "module_list")
LEAVES = ("linear", "linear_no_bias", "batch_norm", "batch_norm_no_stats", "layer_norm", "embedding",
          "relu", "own_tensors")
STATEFUL = tuple(kind for kind in LEAVES if kind not in ("relu", "batch_norm_no_stats"))


def leaf(kind: str, d: int) -> nn.Module:
    """A layer of width ``d``, float64: parameters, buffers, entries that hold None, or nothing."""
    if kind == "linear":
        return nn.Linear(d, d, dtype=torch.float64)
    if kind == "linear_no_bias":
        return nn.Linear(d, d, bias=False, dtype=torch.float64)  # _parameters["bias"] is None
    if kind == "batch_norm":
        bn = nn.BatchNorm1d(d, dtype=torch.float64)
        with torch.no_grad():
            bn.running_mean.normal_()
            bn.running_var.uniform_(0.5, 2.0)
            bn.num_batches_tracked.fill_(3)
        return bn
    if kind == "batch_norm_no_stats":  # no parameters, three buffers that hold None
        return nn.BatchNorm1d(d, affine=False, track_running_stats=False, dtype=torch.float64)
    if kind == "layer_norm":
        return nn.LayerNorm(d, dtype=torch.float64)
    if kind == "embedding":
        return nn.Embedding(3, d, dtype=torch.float64)
    if kind == "relu":
        return nn.ReLU()
    # a plain module holding a parameter, a submodule and two buffers: its own entries come before
    # its submodule's in named_parameters() (a walk that lists children first does not), and one
    # buffer is not persistent (a split made from state_dict() loses it)
    own = nn.Module()
    own.register_parameter("scale", nn.Parameter(torch.randn(d, dtype=torch.float64)))
    own.add_module("proj", nn.Linear(d, d, dtype=torch.float64))
    own.register_buffer("steps", torch.tensor(7))
    own.register_buffer("scratch", torch.full((d,), 0.5, dtype=torch.float64), persistent=False)
    return own


@dataclass
class ModelCase:
    """A model built from torch.nn classes, and how it was drawn (shown in counterexamples)."""

    model: nn.Module
    seed: int
    shares: str = "nothing"  # "nothing", "a module" (one submodule in two places), "a weight" (tied)

    @functools.cached_property
    def _model_text(self) -> str:
        return " ".join(str(self.model).split())

    def text(self) -> str:
        model = self._model_text  # a module's repr is dear: once per case
        if self.shares == "nothing":
            return f"{model} (seed {self.seed})"
        return f"{model} (seed {self.seed}, sharing {self.shares})"


def container(kind: str, children: list[tuple[str, nn.Module]]) -> nn.Module:
    if kind == "sequential":
        return nn.Sequential(*[m for _, m in children])
    return nn.ModuleDict(children)


@st.composite
def models(draw, names: tuple[str, ...] = PLAIN_NAMES, share: bool = False,
           must_name: tuple[str, ...] = ()) -> ModelCase:
    """A Sequential or ModuleDict of layers, one level of nesting at most. ``must_name``:
    names the top ModuleDict must use (one of them, first or later); ``share``: a submodule
    used in two places, or a weight tied between two linears."""
    seed = draw(st.integers(0, 2**16), label="init seed")
    d = draw(st.integers(1, 3), label="width")
    top = "dict" if must_name else draw(sampled(("sequential", "dict")), label="top container")
    # beside a special name, two children or more, each with a tensor of its own: some keys
    # start with the special name and some do not
    count = draw(st.integers(2 if must_name else 1, 3), label="children")
    kinds = [draw(sampled(STATEFUL if must_name else LEAVES), label=f"layer {i}") for i in range(count)]
    nested = draw(st.integers(-1, count - 1), label="child made a Sequential of two (-1: none)")
    inner = draw(sampled(LEAVES), label="its second layer") if nested >= 0 else None
    if top == "sequential":
        labels = [str(i) for i in range(count)]
    elif must_name:
        special = draw(sampled(must_name), label="special name")
        others = tuple(n for n in names if n != special)
        labels = list(draw(st.lists(sampled(others), min_size=count - 1, max_size=count - 1, unique=True),
                           label="other names"))
        labels.insert(draw(st.integers(0, count - 1), label="its place"), special)
    else:
        labels = list(draw(st.lists(sampled(names), min_size=count, max_size=count, unique=True),
                           label="names"))
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        children: list[tuple[str, nn.Module]] = []
        for i, (label, kind) in enumerate(zip(labels, kinds)):
            layer = leaf(kind, d)
            if i == nested and inner is not None:
                layer = nn.Sequential(layer, leaf(inner, d))
            children.append((label, layer))
        shares = "nothing"
        if share:
            shares = draw(sampled(("a module", "a weight")), label="shared")
            if shares == "a module":
                which = draw(st.integers(0, count - 1), label="module used twice")
                name = "again" if top == "dict" else str(count)
                children.append((name, children[which][1]))
            else:
                first, second = nn.Linear(d, d, dtype=torch.float64), nn.Linear(d, d, dtype=torch.float64)
                second.weight = first.weight
                place = draw(st.integers(0, count), label="place of the tied pair")
                tied = ("tied_a", first), ("tied_b", second)
                if top == "sequential":
                    children[place:place] = [("", first), ("", second)]
                else:
                    children[place:place] = list(tied)
        model = container(top, children)
    return ModelCase(model, seed, shares)


# ------------------------------------------------------------------ masked_copy

@dataclass
class MaskCase:
    module: ModelCase
    mask: torch.Tensor
    spelled: bool = True  # persistent=True written out (False: left out, the default)

    def text(self, persistent: bool = True) -> str:
        said = "persistent left out: the default" if not self.spelled and persistent else f"persistent={persistent}"
        return (f"a {self.mask.dtype} mask of shape {tuple(self.mask.shape)} on {self.module.text()}, "
                f"{said}")

    def call(self, impl, persistent: bool = True):
        module, mask = self.module.model, self.mask
        if persistent and not self.spelled:
            return impl.masked_copy(module, mask)
        return impl.masked_copy(module, mask, persistent)


@st.composite
def mask_cases(draw, share: bool = False) -> MaskCase:
    module = draw(models(share=share))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2), label="mask shape"))
    dtype = draw(sampled((torch.bool, torch.float32, torch.float64, torch.uint8)), label="mask dtype")
    if dtype == torch.bool:
        mask = draw(int_tensors(shape, 0, 1), label="mask").bool()
    elif dtype == torch.uint8:
        mask = draw(int_tensors(shape, 0, 1, torch.uint8), label="mask")
    else:
        mask = draw(float_tensors(shape, dtype, 0.0, 1.0), label="mask")
    return MaskCase(module, mask, draw(st.booleans(), label="persistent spelled out"))


def oracle_copy(case: MaskCase, persistent: bool = True) -> nn.Module:
    masked = copy.deepcopy(case.module.model)
    masked.register_buffer("mask", case.mask, persistent=persistent)
    return masked


def pair(got: object, what: str) -> tuple[nn.Module, dict]:
    assert isinstance(got, tuple) and len(as_tuple(got)) == 2, (
        f"{what}: expected a pair (masked, checkpoint), got {type(got).__name__}")
    masked, checkpoint = as_tuple(got)
    assert isinstance(masked, nn.Module), f"{what}: the copy is a {type(masked).__name__}, not a module"
    return masked, checkpoint


def tensors_of(module: nn.Module) -> list[torch.Tensor]:
    return [t for _, t in named_parameters(module)] + [t for _, t in named_buffers(module)]


def check_copy(got: object, case: MaskCase, persistent: bool = True) -> None:
    """The copy: the module's class, its parameters and buffers (equal values, none of them the
    module's own tensors), and the mask as the buffer "mask" (the ordinary comparison every
    masked_copy property rides with)."""
    what = f"masked_copy for {case.text(persistent)}"
    masked, _ = pair(got, what)
    module = case.module.model
    assert masked is not module, (f"{what}: the copy is the module itself; deep-copy it "
                                  "(copy.deepcopy) and register the mask on the copy")
    assert type(masked) is type(module), (
        f"{what}: the copy is a {type(masked).__name__}, the module a {type(module).__name__}")
    params = dict(named_parameters(masked))
    buffers = dict(named_buffers(masked))
    assert "mask" not in params, (
        f"{what}: the mask is a Parameter of the copy: parameters() hands it to the optimizer, "
        "which trains it. Register it with register_buffer")
    assert "mask" in buffers, (
        f"{what}: the copy has no buffer named 'mask': a plain attribute is not part of the "
        "module's state (.to() leaves it behind, state_dict() forgets it). Register it with "
        "register_buffer")
    expected = oracle_copy(case, persistent)
    want_params, want_buffers = dict(named_parameters(expected)), dict(named_buffers(expected))
    assert list(params) == list(want_params), (
        f"{what}: the copy's parameters are {list(params)}, the module's {list(want_params)}")
    assert list(buffers) == list(want_buffers), (
        f"{what}: the copy's buffers are {list(buffers)}, expected the module's and 'mask': "
        f"{list(want_buffers)}")
    for name, tensor in want_params.items():
        assert_same(params[name].detach(), tensor.detach(), what=f"{what}: parameter {name} of the copy")
    for name, tensor in want_buffers.items():
        assert_same(buffers[name], tensor, what=f"{what}: buffer {name} of the copy")
    own = tensors_of(module)
    for name, tensor in [*params.items(), *buffers.items()]:
        if name != "mask" and tensor.numel() and any(
                tensor.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() for t in own):
            raise AssertionError(
                f"{what}: the copy's {name} is the module's own memory: training the copy would "
                "change the module. Make a deep copy (copy.copy shares the module's tensors)")


SPEC_LAYER = ModelCase(nn.Linear(2, 1, dtype=torch.float64), 0)
SPEC_MASK = MaskCase(SPEC_LAYER, torch.tensor([True, False]), spelled=False)


@pytest.mark.weight(3)
@settings(max_examples=20)
@example(SPEC_MASK)
@given(mask_cases())
def test_the_copy_holds_the_mask_as_a_buffer(impl, case):
    """A deep copy of the module with the mask registered on it as a buffer (not a Parameter,
    not a plain attribute)."""
    check_copy(case.call(impl), case)


def check_checkpoint(checkpoint: object, expected: dict[str, torch.Tensor], what: str) -> None:
    assert type(checkpoint) is dict, (
        f"{what}: the checkpoint is a {type(checkpoint).__name__}; return a plain dict "
        "(dict(masked.state_dict()))")
    assert list(checkpoint) == list(expected), (
        f"{what}: the checkpoint's keys are {list(checkpoint)}, expected {list(expected)}")
    for name, tensor in expected.items():
        value = checkpoint[name]
        assert isinstance(value, torch.Tensor), f"{what}: checkpoint[{name!r}] is a {type(value).__name__}"
        assert_same(value.detach(), tensor, what=f"{what}: checkpoint[{name!r}]")


@pytest.mark.weight(3)
@settings(max_examples=20)
@example(SPEC_MASK)
@given(mask_cases())
def test_the_checkpoint_holds_the_mask_only_when_persistent(impl, case):
    """The copy's state_dict, with the mask when it is persistent and without it when not:
    both in the same example (persistent=True left out, the default, in some)."""
    answers = {}
    for persistent in (True, False):
        what = f"masked_copy for {case.text(persistent)}"
        answers[persistent] = got = case.call(impl, persistent)
        _, checkpoint = pair(got, what)
        check_checkpoint(checkpoint, dict(oracle_copy(case, persistent).state_dict()), what)
    assert_ordinary(lambda: check_copy(answers[True], case))


# ------------------------------------------------------------------ split_state

def expected_split(model: nn.Module) -> tuple[dict, dict]:
    return dict(named_parameters(model)), dict(named_buffers(model))


def read_split(got: object, what: str) -> tuple[dict, dict]:
    assert isinstance(got, tuple) and len(as_tuple(got)) == 2, (
        f"{what}: expected a pair (parameters, buffers), got {type(got).__name__}")
    parameters, buffers = as_tuple(got)
    for which, d in (("parameters", parameters), ("buffers", buffers)):
        assert type(d) is dict, f"{what}: {which} is a {type(d).__name__}; return a plain dict"
    return parameters, buffers


def check_split(got: object, case: ModelCase) -> None:
    """The entries by name, with equal values (their identity and order are other properties'
    claims)."""
    what = f"split_state of {case.text()}"
    parameters, buffers = read_split(got, what)
    for which, have, want in (("parameters", parameters, expected_split(case.model)[0]),
                              ("buffers", buffers, expected_split(case.model)[1])):
        extra = [n for n in have if n not in want]
        assert not extra, f"{what}: {which} holds {extra}, which it should not (expected {sorted(want)})"
        missing = [n for n in want if n not in have]
        assert not missing, f"{what}: {which} lacks {missing} (expected {sorted(want)})"
        for name, tensor in want.items():
            value = have[name]
            assert isinstance(value, torch.Tensor), f"{what}: {which}[{name!r}] is a {type(value).__name__}"
            assert_same(value.detach(), tensor.detach(), what=f"{what}: {which}[{name!r}]")


SPEC_MODEL = ModelCase(nn.Sequential(nn.Linear(2, 2, bias=False, dtype=torch.float64),
                                     nn.BatchNorm1d(2, dtype=torch.float64)), 0)


@pytest.mark.weight(3)
@settings(max_examples=25)
@example(SPEC_MODEL)
@given(models())
def test_split_state_matches_named_parameters_and_named_buffers(impl, case):
    """Every parameter and every buffer under its qualified name, entries holding None left out."""
    check_split(impl.split_state(case.model), case)


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(models(share=True), models())
def test_a_shared_tensor_is_listed_once_under_its_first_name(impl, shared, ordinary):
    """A submodule used in two places, or a weight tied between two layers: its tensors once,
    under the first name that reaches them."""
    with harder_than(lambda: check_split(impl.split_state(ordinary.model), ordinary)):
        check_split(impl.split_state(shared.model), shared)


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(SPEC_MODEL)
@given(models(share=True))
def test_the_values_are_the_models_own_tensors(impl, case):
    """parameters[name] is the model's Parameter itself (and a buffer the model's own tensor):
    an optimizer made from them trains the model."""
    what = f"split_state of {case.text()}"
    got = impl.split_state(case.model)
    parameters, buffers = read_split(got, what)
    for which, have, want in (("parameters", parameters, expected_split(case.model)[0]),
                              ("buffers", buffers, expected_split(case.model)[1])):
        for name, tensor in want.items():
            if name in have:
                assert have[name] is tensor, (
                    f"{what}: {which}[{name!r}] is not the model's own tensor (a copy, .data or a "
                    "detached view): an optimizer made from it would not train the model")
    assert_ordinary_answer(got, None, compare=lambda g, _e, _w: check_split(g, case))


@settings(max_examples=20)
@example(SPEC_MODEL)
@given(models(share=True))
def test_the_entries_come_in_named_parameters_order(impl, case):
    """The order named_parameters() and named_buffers() give (an optimizer's state refers to its
    parameters by position)."""
    what = f"split_state of {case.text()}"
    got = impl.split_state(case.model)
    parameters, buffers = read_split(got, what)
    with anchored(lambda: check_split(got, case)):
        for which, have, want in (("parameters", parameters, expected_split(case.model)[0]),
                                  ("buffers", buffers, expected_split(case.model)[1])):
            listed = [name for name in have if name in want]
            assert listed == [name for name in want if name in have], (
                f"{what}: {which} come in the order {listed}, expected {list(want)} "
                f"(named_{which}()'s: modules in named_modules() order, each module's own entries "
                "in registration order)")


# ------------------------------------------------------------------ strip_prefix

def wrapped_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The checkpoint of a wrapper that holds ``model`` as its submodule ``module``, as
    nn.DataParallel and DistributedDataParallel do (their state_dict's keys are these; built by
    hand, since DataParallel moves the model to a GPU where there is one), as a plain dict."""
    wrapper = nn.Module()
    wrapper.add_module("module", model)
    return dict(wrapper.state_dict())


def check_stripped(got: object, expected: dict[str, torch.Tensor], what: str) -> None:
    assert type(got) is dict, f"{what}: returned a {type(got).__name__}; return a plain dict"
    assert list(got) == list(expected), (
        f"{what}: the keys are {list(got)}, expected {list(expected)}")
    for name, tensor in expected.items():
        value = got[name]
        assert isinstance(value, torch.Tensor), f"{what}: [{name!r}] is a {type(value).__name__}"
        assert_same(value, tensor, what=f"{what}: [{name!r}]")


@dataclass
class StripCase:
    model: ModelCase

    def text(self) -> str:
        return f"the wrapped checkpoint (module. before every key) of {self.model.text()}"

    def call(self, impl):
        return impl.strip_prefix(wrapped_state(self.model.model), "module.")


def check_unwrapped(impl, case: StripCase) -> None:
    """The wrapped checkpoint, stripped, is the bare model's own state_dict: it loads into the
    bare model with load_state_dict(strict=True) (the ordinary comparison)."""
    check_stripped(case.call(impl), dict(case.model.model.state_dict()), f"strip_prefix of {case.text()}")


@st.composite
def strip_cases(draw, names: tuple[str, ...] = PLAIN_NAMES, must_name: tuple[str, ...] = ()) -> StripCase:
    return StripCase(draw(models(names, must_name=must_name)))


# The spec's examples: a model with an "encoder" and a submodule named "module", wrapped; and a
# bare model whose first submodule is named "module" beside a "head".
SPEC_STRIP = StripCase(ModelCase(nn.ModuleDict([("encoder", nn.Linear(1, 1, dtype=torch.float64)),
                                                ("module", nn.LayerNorm(1, dtype=torch.float64))]), 0))
SPEC_KEEP = StripCase(ModelCase(nn.ModuleDict([("module", nn.LayerNorm(1, dtype=torch.float64)),
                                               ("head", nn.Linear(1, 1, dtype=torch.float64))]), 0))


@pytest.mark.weight(3)
@settings(max_examples=25)
@example(SPEC_STRIP)
@given(strip_cases())
def test_a_wrapped_checkpoint_loses_the_prefix(impl, case):
    """A wrapper's checkpoint (nn.DataParallel's, DDP's), stripped, equals model.state_dict(): the
    same keys in the same order, the same tensors; it loads with load_state_dict(strict=True)."""
    check_unwrapped(impl, case)


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(strip_cases(PLAIN_NAMES + MODULE_NAMES, must_name=MODULE_NAMES), strip_cases())
def test_only_the_leading_prefix_is_removed(impl, case, ordinary):
    """A model with submodules named module, submodule or module_list: the wrapper's prefix goes, the
    "module." inside a name stays."""
    with harder_than(lambda: check_unwrapped(impl, ordinary)):
        check_unwrapped(impl, case)


# Orders of a checkpoint's entries: a checkpoint is looked up by key, so any order is one (a
# merged or edited checkpoint's keys need not come module by module).
ORDERS = ("as state_dict gives them", "reversed", "rotated by one", "odd places first")


def reordered(state: dict[str, torch.Tensor], order: str) -> dict[str, torch.Tensor]:
    items = list(state.items())
    if order == "reversed":
        items.reverse()
    elif order == "rotated by one":
        items = items[1:] + items[:1]
    elif order == "odd places first":
        items = items[1::2] + items[::2]
    return dict(items)


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(SPEC_KEEP, ORDERS[0])
@example(SPEC_KEEP, ORDERS[2])
@given(strip_cases(PLAIN_NAMES, must_name=("module",)), sampled(ORDERS))
def test_a_checkpoint_not_every_key_of_which_has_the_prefix_is_kept(impl, case, order):
    """A bare model with a submodule named "module" beside others: its own state_dict, its entries
    in some order, comes back as it was. Its wrapped checkpoint, in the same example, is
    stripped."""
    state = reordered(dict(case.model.model.state_dict()), order)
    what = (f"strip_prefix of {case.model.text()}'s own state_dict (not every key starts with "
            f"'module.'), its entries {order}")
    got = impl.strip_prefix(state, "module.")
    with anchored(lambda: check_unwrapped(impl, case)):
        check_stripped(got, state, what)


PREFIXES = ("_orig_mod.", "model.", "module.module.", "net.")


@settings(max_examples=20)
@given(strip_cases(), sampled(PREFIXES))
def test_another_prefix(impl, case, prefix):
    """torch.compile's "_orig_mod.", Lightning's "model.", a model wrapped twice: the prefix
    given, whatever its length."""
    bare = dict(case.model.model.state_dict())
    state = {prefix + key: value for key, value in bare.items()}
    with harder_than(lambda: check_unwrapped(impl, case)):
        check_stripped(impl.strip_prefix(state, prefix), bare,
                       f"strip_prefix(..., {prefix!r}) of {case.model.text()}'s state_dict with "
                       f"{prefix!r} before every key")
