"""Activation checkpointing: a forward half that keeps only the inputs and the random state, a
backward half that recomputes (the same dropout masks), and the autograd.Function joining them,
against torch.utils.checkpoint.checkpoint(use_reentrant=False)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.checkpoint import checkpoint as torch_checkpoint

from grader.testing import StudentError, assert_same, observed
from tests.numerics import manual_seed
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import float_tensors, int_tensors, sampled

_HOW = ("run fn under torch.no_grad() in forward, keep the detached inputs and torch.get_rng_state(); "
        "in backward restore the state inside torch.random.fork_rng and run fn again with grad")
pytestmark = pytest.mark.exercise(points=15, forbid={
    "torch.utils.checkpoint.checkpoint": _HOW,
    "torch.utils.checkpoint.checkpoint_sequential": _HOW,
    "torch.utils.checkpoint.CheckpointFunction": _HOW,
}, mutates={"checkpoint_backward": ("grads",)})

KINDS = ("mlp", "embedding", "bilinear")


@dataclass
class Segment:
    """A checkpointed segment: a float64 module (with dropout where it has one) and its inputs."""

    kind: str
    seed: int
    sizes: tuple[int, ...]
    p: float  # the dropout probability (mlp and embedding)
    inputs: tuple[torch.Tensor, ...]

    def module(self) -> nn.Module:
        with torch.random.fork_rng(devices=[]):
            manual_seed(self.seed)
            n_in, hidden, n_out = self.sizes
            if self.kind == "mlp":
                fn = nn.Sequential(nn.Linear(n_in, hidden), nn.Dropout(self.p), nn.Tanh(),
                                   nn.Linear(hidden, n_out))
            elif self.kind == "dropout last":  # the output shows the mask: its zeros
                fn = nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, n_out),
                                   nn.Dropout(self.p))
            elif self.kind == "embedding":
                fn = nn.Sequential(nn.Embedding(n_in, hidden), nn.Dropout(self.p), nn.Tanh(),
                                   nn.Linear(hidden, n_out))
            else:
                fn = nn.Bilinear(n_in, hidden, n_out)
        return fn.double()

    def fresh_inputs(self) -> list[torch.Tensor]:
        """Copies of the inputs, the floating ones requiring grad."""
        return [x.detach().clone().requires_grad_(x.is_floating_point()) for x in self.inputs]

    def describe(self) -> str:
        inputs = ", ".join(f"{tuple(x.shape)} {str(x.dtype).removeprefix('torch.')}" for x in self.inputs)
        module = {"mlp": "Linear, Dropout({p}), Tanh, Linear", "embedding": "Embedding, Dropout({p}), "
                  "Tanh, Linear", "bilinear": "Bilinear",
                  "dropout last": "Linear, Tanh, Linear, Dropout({p})"}[self.kind].format(p=self.p)
        return f"fn = {module} (float64, training mode), inputs {inputs}"


@st.composite
def segments(draw, dropout: bool | None = None, kinds: tuple[str, ...] = KINDS) -> Segment:
    kind = draw(sampled(kinds), label="fn")
    many = kind == "dropout last"  # enough output elements that two masks all but surely differ
    sizes = tuple(draw(st.integers(3 if many and label == "out" else 1, 4), label=label)
                  for label in ("in", "hidden", "out"))
    n = draw(st.integers(3 if many else 1, 4), label="batch")
    if kind in ("mlp", "dropout last"):
        inputs: tuple[torch.Tensor, ...] = (draw(float_tensors((n, sizes[0]), low=-2, high=2), label="x"),)
    elif kind == "embedding":
        inputs = (draw(int_tensors((n,), 0, sizes[0] - 1), label="token ids"),)
    else:
        inputs = (draw(float_tensors((n, sizes[0]), low=-2, high=2), label="x1"),
                  draw(float_tensors((n, sizes[1]), low=-2, high=2), label="x2"))
    has_dropout = kind != "bilinear"
    if dropout is None:
        p = draw(sampled((0.0, 0.5)), label="dropout p") if has_dropout else 0.0
    else:
        p = 0.5 if dropout and has_dropout else 0.0
    return Segment(kind, draw(st.integers(0, 2**16), label="init seed"), sizes, p, inputs)


def forward_oracle(segment: Segment, rng_state: torch.Tensor) -> torch.Tensor:
    """fn(*inputs) with the random state the submission says it ran fn from."""
    fn = segment.module()
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.set_rng_state(rng_state)
        return fn(*[x.detach() for x in segment.inputs])


def backward_oracle(segment: Segment, rng_state: torch.Tensor, grad_output: torch.Tensor):
    """torch.utils.checkpoint from that random state: the inputs' and the parameters' gradients."""
    fn = segment.module()
    inputs = segment.fresh_inputs()
    with torch.random.fork_rng(devices=[]):
        torch.set_rng_state(rng_state)
        out = torch_checkpoint(fn, *inputs, use_reentrant=False)
        out.backward(grad_output)
    return [x.grad if x.requires_grad else None for x in inputs], [p.grad for p in fn.parameters()]


def rng_state_of(saved, what: str) -> torch.Tensor:
    """saved["rng_state"], checked to be a CPU generator state before the oracle uses it."""
    assert isinstance(saved, dict) and "rng_state" in saved, (
        f"{what}: saved is {type(saved).__name__} without 'rng_state'; expected the dict of the spec")
    state = saved["rng_state"]
    reference = torch.get_rng_state()
    assert type(state) is torch.Tensor and state.dtype == torch.uint8 and state.shape == reference.shape, (
        f"{what}: saved['rng_state'] is not a CPU generator state ({reference.shape[0]} uint8 values, "
        "what torch.get_rng_state() returns)")
    return state


def forward(impl, segment: Segment):
    """impl.checkpoint_forward on fresh copies; (output, saved, rng_state)."""
    got = impl.checkpoint_forward(segment.module(), *segment.fresh_inputs())
    what = f"checkpoint_forward({segment.describe()})"
    assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}; expected (output, saved)"
    output, saved = got
    return output, saved, rng_state_of(saved, what)


def check_forward(impl, segment: Segment) -> None:
    output, _, state = forward(impl, segment)
    assert_same(output.detach() if isinstance(output, torch.Tensor) else output,
                forward_oracle(segment, state),
                what=f"the output of checkpoint_forward({segment.describe()}) (fn of the inputs, from the "
                     "random state saved)")


def grad_output_for(segment: Segment, seed: int) -> torch.Tensor:
    with torch.random.fork_rng(devices=[]):
        manual_seed(seed)
        shape = forward_oracle(segment, torch.get_rng_state()).shape
        return torch.randn(shape, dtype=torch.float64)


def chosen_saved(segment: Segment, seed: int) -> dict:
    """A saved dict as the forward half makes it, with a random state of the test's choosing
    (another than the one the code runs from: so only a restored state gives the masks)."""
    return {"inputs": [x.detach().clone() for x in segment.inputs],
            "rng_state": torch.Generator().manual_seed(seed).get_state()}


def check_backward(impl, segment: Segment, seed: int, old_grads: bool = False) -> None:
    """The backward half from a saved dict; the returned input gradients and the parameters'
    .grad against torch.utils.checkpoint's from the same random state."""
    saved = chosen_saved(segment, seed)
    grad_output = grad_output_for(segment, seed)
    fn = segment.module()
    if old_grads:
        for p in fn.parameters():
            p.grad = torch.ones_like(p)
    got = impl.checkpoint_backward(fn, saved, grad_output)
    inputs_expected, params_expected = backward_oracle(segment, saved["rng_state"], grad_output)
    what = f"checkpoint_backward({segment.describe()})"
    assert_same(got, inputs_expected, what=f"{what}: the inputs' gradients (torch.utils.checkpoint gives "
                                           "the expected; dropout must draw the masks of saved['rng_state'])")
    for (name, p), e in zip(fn.named_parameters(), params_expected):
        expected = e + 1 if old_grads else e
        assert_same(p.grad, expected, what=f"{what}: {name}.grad after the backward half"
                    + (" (which held ones before: gradients are added to .grad)" if old_grads else ""))


# ------------------------------------------------------------------ checkpoint_forward

@pytest.mark.weight(2)
@settings(max_examples=20)
@given(segments())
def test_forward_is_fn_of_the_inputs_without_a_graph(impl, segment):
    output, _, state = forward(impl, segment)
    assert isinstance(output, torch.Tensor), f"the output is {type(output).__name__}; expected a tensor"
    assert not output.requires_grad, (
        f"checkpoint_forward({segment.describe()}): the output requires grad, so a graph of fn's "
        "intermediates was recorded and kept alive; run fn under torch.no_grad()")
    assert_same(output, forward_oracle(segment, state),
                what=f"checkpoint_forward({segment.describe()}): the output (fn of the inputs, from the "
                     "random state saved)")


@pytest.mark.weight(2)
@settings(max_examples=15)
@given(segments())
def test_forward_saves_only_the_inputs_and_the_random_state(impl, segment):
    """What backward will need, and nothing of fn's intermediates."""
    fn, inputs = segment.module(), segment.fresh_inputs()
    got = impl.checkpoint_forward(fn, *inputs)
    assert_arguments_unchanged(impl, what="fn and the inputs after checkpoint_forward")
    what = f"checkpoint_forward({segment.describe()})"
    assert isinstance(got, tuple) and len(got) == 2, f"{what} returned {got!r}; expected (output, saved)"
    saved = got[1]
    assert type(saved) is dict and sorted(saved) == ["inputs", "rng_state"], (
        f"{what}: saved has the keys {sorted(saved) if isinstance(saved, dict) else type(saved).__name__}; "
        "expected exactly 'inputs' and 'rng_state' on the CPU (nothing else: no intermediates)")
    assert_same(saved["inputs"], [x.detach() for x in segment.inputs], what=f"{what}: saved['inputs']")
    assert not any(x.requires_grad for x in saved["inputs"]), (
        f"{what}: saved['inputs'] require grad; keep them detached (x.detach())")
    rng_state_of(saved, what)
    assert_ordinary(lambda: check_forward(impl, segment))


# ------------------------------------------------------------------ checkpoint_backward

@pytest.mark.weight(4)
@settings(max_examples=20)
@given(segments(), st.integers(0, 2**16))
def test_backward_gradients_match_torch_checkpoint(impl, segment, seed):
    check_backward(impl, segment, seed)


@pytest.mark.weight(2)
@settings(max_examples=15)
@given(segments(dropout=True, kinds=("mlp", "embedding")), st.integers(0, 2**16))
def test_backward_draws_the_same_dropout_masks(impl, segment, seed):
    """Dropout(0.5) in fn: the recomputation must draw the forward pass's masks again."""
    check_backward(impl, segment, seed)


@settings(max_examples=10)
@given(segments(), st.integers(0, 2**16))
def test_backward_adds_to_the_parameters_grad(impl, segment, seed):
    check_backward(impl, segment, seed, old_grads=True)


@settings(max_examples=10)
@given(segments(dropout=True), st.integers(0, 2**16))
def test_backward_leaves_the_global_random_state_alone(impl, segment, seed):
    """Observed where the code runs (the worker, in the sandbox)."""
    impl.checkpoint_backward(segment.module(), chosen_saved(segment, seed), grad_output_for(segment, seed))
    changed = list(impl.effects)
    with anchored(lambda: check_backward(impl, segment, seed)):
        assert not changed, (
            f"checkpoint_backward({segment.describe()}) changed {'; '.join(changed)}; restore the saved "
            "state inside torch.random.fork_rng, which puts the caller's back afterwards")


# ------------------------------------------------------------------ checkpoint

def gradients_through(out: torch.Tensor, leaves: list[torch.Tensor], grad_output: torch.Tensor,
                      what: str) -> tuple:
    """torch.autograd.grad through the answer's output (the grader's way of back-propagating,
    and the worker's). A graph that refuses it broke a line of the spec: the message names it."""
    try:
        return torch.autograd.grad(out, leaves, grad_output, allow_unused=True)
    except (RuntimeError, StudentError) as exc:
        error = exc.original if isinstance(exc, StudentError) else exc
        kind = type(error).__name__
        if "number of gradients" in str(error):
            raise AssertionError(
                f"{what}: torch.autograd.grad through the output raised {kind}: {error}; the spec: "
                "Function.backward returns one gradient per argument of forward: None for fn, then "
                "one per input") from None
        raise AssertionError(
            f"{what}: torch.autograd.grad through the output raised {kind}: {error}; the spec: a backward "
            "pass through the output, with loss.backward() or with torch.autograd.grad, gives every input "
            "its gradient (as torch.utils.checkpoint with use_reentrant=False does; the reentrant one "
            "refuses torch.autograd.grad)") from None


def connected_output(out, what: str) -> torch.Tensor:
    assert isinstance(out, torch.Tensor) and out.requires_grad, (
        f"{what} returned {out if not isinstance(out, torch.Tensor) else 'a tensor that does not require grad'}; "
        "expected an output connected to the inputs (Function.apply)")
    return out


@pytest.mark.weight(3)
@example(Segment("mlp", 0, (2, 4, 1), 0.0, (torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64),)), 7)
@settings(max_examples=15)
@given(segments(dropout=False, kinds=("mlp", "bilinear")), st.integers(0, 2**16))
def test_checkpoint_is_differentiable_like_torch_checkpoint(impl, segment, seed):
    """The Function end to end (no dropout here: the next property has it; float inputs: a
    Function's output requires grad only when an input does): the output, and the inputs'
    gradients through it."""
    check_end_to_end(impl, segment, seed)


def check_end_to_end(impl, segment: Segment, seed: int) -> None:
    """checkpoint's output and the inputs' gradients through it, against torch.utils.checkpoint
    (a segment without dropout: the masks would come from wherever the code runs)."""
    inputs = segment.fresh_inputs()
    what = f"checkpoint({segment.describe()})"
    out = connected_output(impl.checkpoint(segment.module(), *inputs), what)
    expected = forward_oracle(segment, torch.get_rng_state())
    assert_same(out.detach(), expected, what=f"{what}: the output")
    grad_output = grad_output_for(segment, seed)
    leaves = [x for x in inputs if x.requires_grad]
    got = gradients_through(out, leaves, grad_output, what)
    inputs_expected, _ = backward_oracle(segment, torch.get_rng_state(), grad_output)
    assert_same(list(got), [g for g in inputs_expected if g is not None],
                what=f"{what}: the inputs' gradients through it (torch.utils.checkpoint gives the expected)")


@pytest.mark.weight(2)
@settings(max_examples=15)
@given(segments(dropout=True, kinds=("dropout last",)), st.integers(0, 2**16))
def test_checkpoint_with_dropout_recomputes_from_the_saved_random_state(impl, segment, seed):
    """The Function end to end with Dropout(0.5) as fn's last layer, whose mask the output
    shows (its zeros): the inputs' gradients are those of a plain forward and backward pass
    with that mask, and the backward pass leaves the caller's random state alone. A
    recomputation that does not restore the saved state draws its masks from the caller's
    generator: in a training loop, other masks than the forward pass's (the grader puts the
    global state back after every call, so here it shows as a changed random state)."""
    with anchored(lambda: check_end_to_end(impl, replace(segment, p=0.0), seed)):  # and without dropout
        check_dropout_end_to_end(impl, segment, seed)


def check_dropout_end_to_end(impl, segment: Segment, seed: int) -> None:
    inputs = segment.fresh_inputs()
    what = f"checkpoint({segment.describe()})"
    out = connected_output(impl.checkpoint(segment.module(), *inputs), what)
    plain = segment.module()
    keep_scale = 1.0 / (1.0 - segment.p)
    with torch.no_grad():
        before_dropout = plain[:-1](*[x.detach() for x in segment.inputs])
    assert out.shape == before_dropout.shape, (
        f"{what}: the output has the shape {tuple(out.shape)}; expected {tuple(before_dropout.shape)}")
    mask = (out.detach() != 0).to(before_dropout.dtype)
    assert_same(out.detach(), before_dropout * (mask * keep_scale),
                what=f"{what}: the output (fn of the inputs, with the dropout mask its zeros show)")
    grad_output = grad_output_for(segment, seed)
    seen = len(impl.effects)  # what the forward pass changed (its dropout draws) is not the question
    with observed(impl.effects):  # in-process the backward pass runs here; in the sandbox the worker says
        got = gradients_through(out, inputs, grad_output, what)
    changed = impl.effects[seen:]
    leaves = segment.fresh_inputs()
    expected = torch.autograd.grad(plain[:-1](*leaves) * (mask * keep_scale), leaves, grad_output)
    assert_same(list(got), list(expected),
                what=f"{what}: the inputs' gradients through it (a plain forward and backward pass with the "
                     "forward pass's dropout mask gives the expected)")
    assert not changed, (
        f"the backward pass through {what} changed {'; '.join(dict.fromkeys(changed))}: its recomputation drew "
        "the dropout masks from the caller's random state, which in a training loop gives other masks than "
        "the forward pass's; restore the state saved in forward inside torch.random.fork_rng")


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@settings(max_examples=10)
@given(segments(dropout=True, kinds=("mlp", "embedding")), st.integers(0, 2**16))
def test_on_gpu_dropout_masks_come_back_from_the_cuda_generator(impl, segment, seed):
    """On the GPU dropout draws from the device's generator: saved must hold its state too
    ("cuda_rng_state"), and the recomputation must restore it."""
    fn = segment.module().cuda()
    inputs = [x.cuda() for x in segment.fresh_inputs()]
    got = impl.checkpoint_forward(fn, *inputs)
    assert isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict), f"returned {got!r}"
    output, saved = got
    assert sorted(saved) == ["cuda_rng_state", "inputs", "rng_state"], (
        f"saved has the keys {sorted(saved)}; on the GPU expected 'cuda_rng_state' too")
    grad_output = grad_output_for(segment, seed).cuda()
    got_grads = impl.checkpoint_backward(fn, saved, grad_output)
    oracle_fn = segment.module().cuda()
    leaves = [x.detach().cuda().requires_grad_(x.is_floating_point()) for x in segment.inputs]
    with torch.random.fork_rng(devices=[torch.device("cuda")]):
        torch.set_rng_state(saved["rng_state"].cpu())
        torch.cuda.set_rng_state(saved["cuda_rng_state"].cpu())
        out = torch_checkpoint(oracle_fn, *leaves, use_reentrant=False)
        out.backward(grad_output)
    assert_same(output, out.detach(), what=f"checkpoint_forward({segment.describe()}) on cuda: the output")
    assert_same(got_grads, [x.grad if x.requires_grad else None for x in leaves],
                what=f"checkpoint_backward({segment.describe()}) on cuda: the inputs' gradients")
    for (name, p), e in zip(fn.named_parameters(), oracle_fn.parameters()):
        assert_same(p.grad, e.grad, what=f"checkpoint_backward on cuda: {name}.grad")
