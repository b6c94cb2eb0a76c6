"""What a call may change of the arguments it is given: declared per function, enforced.

A drill's marker says, for each function whose spec lets it change its arguments,
what it may change::

    pytest.mark.exercise(points=10, mutates={"average_gradients": ("grads",)})

- ``"tensors"``: the values of tensor arguments, in place (``dist.all_reduce``-like);
- ``"grads"``: the ``.grad`` of tensor arguments and of module parameters;
- ``"modules"``: module arguments' parameters, buffers and training mode;
- ``"optimizers"``: optimizer arguments' state and options.

Everything else a call changes of its arguments is undone once the call returns and
reported as a sentence in ``impl.mutations``: the test's own objects are what the
test made, so an oracle computed from them after the call is computed from the
grader's inputs, never from what the submission wrote into them, and the properties
"the inputs are left unchanged" read ``impl.mutations``. In-process the undoing
happens here (``ArgumentGuard``); in the sandbox the grader simply does not write
back what is not allowed (``grader.sandbox.writeback``), using the same ``Targets`` to
name and classify what came back.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from grader.core import engine_phrases as words

KINDS = ("tensors", "grads", "modules", "optimizers")


def allowed_kinds(mutates: Mapping[str, Collection[str]] | None, function: str) -> frozenset[str]:
    """The kinds of change ``function`` may make (checked against ``KINDS``)."""
    kinds = frozenset((mutates or {}).get(function, ()))
    unknown = kinds - set(KINDS)
    if unknown:
        raise ValueError(f"mutates={{{function!r}: ...}} names {sorted(unknown)}; the kinds are {KINDS}")
    return kinds


@dataclass
class Targets:
    """Every tensor, module and optimizer reachable from a call's arguments, by id, with
    the kind of change that touches it and how a report names it."""

    kind: dict[int, str] = field(default_factory=dict)
    label: dict[int, str] = field(default_factory=dict)
    objects: list[Any] = field(default_factory=list)

    @classmethod
    def of(cls, args: Sequence[Any], kwargs: Mapping[str, Any], ranks: bool = False,
           rank: int | None = None) -> Targets:
        """``ranks``: ``args`` are a rank run's, one sequence of arguments per rank;
        ``rank``: ``args`` are that one rank's."""
        targets = cls()
        for label, value in labelled(args, kwargs, ranks, rank):
            targets._walk(value, label, 0)
        return targets

    def _add(self, obj: Any, kind: str, label: str) -> bool:
        if id(obj) in self.kind:
            return False
        self.kind[id(obj)], self.label[id(obj)] = kind, label
        self.objects.append(obj)
        if isinstance(obj, torch.Tensor) and obj.is_leaf and obj.grad is not None:
            self._add(obj.grad, "grads", f"{label}.grad")  # a .grad is written in place, too
        return True

    def _walk(self, value: Any, label: str, depth: int) -> None:
        if depth > 8:
            return
        if isinstance(value, torch.nn.Module):
            if self._add(value, "modules", label):
                for name, sub in value.named_modules():  # each submodule's own mode and tensors
                    if name:
                        self._add(sub, "modules", f"{label}.{name}")
                for name, tensor in (*value.named_parameters(), *value.named_buffers()):
                    self._add(tensor, "modules", f"{label}.{name}")
        elif isinstance(value, torch.optim.Optimizer):
            if self._add(value, "optimizers", label):  # its state (Adam's moments) is its own to change
                for i, state in enumerate(list(value.state.values())[:1000]):
                    for key, tensor in state.items():
                        if isinstance(tensor, torch.Tensor):
                            self._add(tensor, "optimizers", f"{label}.state[{i}][{key!r}]")
        elif isinstance(value, torch.Tensor):
            self._add(value, "tensors", label)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value[:1000]):
                self._walk(item, f"{label}[{i}]", depth + 1)
        elif isinstance(value, dict):
            for key, item in list(value.items())[:1000]:
                self._walk(item, f"{label}[{key!r}]", depth + 1)


@dataclass(frozen=True)
class Layout:
    """The lists, dicts and tuples of an argument as a call found them: each one's items,
    whatever else they hold kept by reference (a tensor is compared as itself; its values
    are the tensors' business). No spec lets a call change them: a list emptied, a key
    renamed in the caller's dict is a change of the argument (``changed_containers``)."""

    of: Any  # the container itself, or the leaf value
    items: tuple[tuple[Any, Any], ...] | None = None  # (index or key, Layout); None: a leaf
    length: int = 0

    @classmethod
    def of_value(cls, value: Any, depth: int = 0) -> Layout:
        if depth > 8 or type(value) not in (list, dict, tuple):
            return cls(value)
        pairs = list(value.items()) if type(value) is dict else list(enumerate(value))
        return cls(value, tuple((key, cls.of_value(item, depth + 1)) for key, item in pairs[:1000]), len(pairs))

    def changes(self, now: Any, label: str) -> list[str]:
        """The labels of the containers ``now`` holds otherwise than this layout (``now``: the
        argument after the call, in this process or as a worker sent it back)."""
        if self.items is None:
            return []
        if type(now) is not type(self.of) or len(now) != self.length:
            return [label]
        pairs = list(now.items()) if type(now) is dict else list(enumerate(now))
        if [key for key, _ in pairs[:1000]] != [key for key, _ in self.items]:  # a dict's order too
            return [label]
        found: list[str] = []
        for key, before in self.items:
            if type(now) is dict and key not in now:
                return [label]
            item = now[key]
            if before.items is None:
                if not _same_leaf(before.of, item):
                    return [label]
            else:
                found += before.changes(item, f"{label}[{key!r}]")
        return found

    def restore(self) -> None:
        """Put every list and dict back as it was (the objects it held, the same ones)."""
        if self.items is None:
            return
        for _, item in self.items:
            item.restore()
        if type(self.of) is list:
            self.of[:len(self.items)] = [item.of for _, item in self.items]
            del self.of[self.length:]
        elif type(self.of) is dict:
            kept = dict(self.of) if len(self.items) < self.length else {}
            self.of.clear()
            self.of.update((key, item.of) for key, item in self.items)
            self.of.update((k, v) for k, v in kept.items() if k not in self.of)


def _same_leaf(before: Any, now: Any) -> bool:
    """The same object, or an equal plain value (a number, string, dtype or device)."""
    if before is now:
        return True
    if type(before) is not type(now) or isinstance(before, (torch.Tensor, torch.nn.Module, torch.optim.Optimizer)):
        return False
    try:
        return bool(before == now) or (before != before and now != now)  # NaN is NaN
    except Exception:  # noqa: BLE001 - an object whose == raises is not the same
        return False


def labelled(args: Sequence[Any], kwargs: Mapping[str, Any], ranks: bool = False,
             rank: int | None = None) -> list[tuple[str, Any]]:
    """Each argument with the label a report names it by, positional ones first
    (``ranks``: ``args`` are a rank run's, one sequence per rank; ``rank``: that rank's)."""
    per_rank = list(enumerate(args)) if ranks else [(rank, args)]
    found = [(words.ARGUMENT.format(name=i + 1) if r is None else words.RANK_ARGUMENT.format(rank=r, name=i + 1),
              value) for r, rank_args in per_rank for i, value in enumerate(rank_args)]
    return found + [(words.ARGUMENT.format(name=name), value) for name, value in kwargs.items()]


def argument_layouts(args: Sequence[Any], kwargs: Mapping[str, Any], ranks: bool = False,
                     rank: int | None = None) -> list[tuple[str, Layout]]:
    """Each argument's label (``labelled``) and its ``Layout``."""
    return [(label, Layout.of_value(value)) for label, value in labelled(args, kwargs, ranks, rank)]


def changed_containers(layouts: Sequence[tuple[str, Layout]], now: Sequence[Any]) -> list[str]:
    """What a call changed of its arguments' lists and dicts, as sentences: ``now`` holds
    the arguments after the call, in the order of ``layouts``."""
    said = []
    for (label, layout), value in zip(layouts, now):
        said += [words.CHANGED_IN_PLACE.format(label=changed) for changed in layout.changes(value, label)]
    return said


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape and values (NaN equal to NaN): what "unchanged" means."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if torch.equal(a.detach(), b.detach()):  # the usual case, in one kernel: no NaN, no change
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(torch.nan_to_num(a.detach(), 0.5), torch.nan_to_num(b.detach(), 0.5))
                    and torch.equal(a.detach().isnan(), b.detach().isnan()))
    return bool(torch.equal(a.detach(), b.detach()))


def grad_changed(before: torch.Tensor | None, after: torch.Tensor | None) -> bool:
    """A ``.grad`` that appeared, went or holds other values."""
    if before is None or after is None:
        return (before is None) != (after is None)
    return not same_tensor(before, after)


@dataclass
class _TensorState:
    tensor: torch.Tensor
    data: torch.Tensor
    grad: torch.Tensor | None
    requires_grad: bool


class ArgumentGuard:
    """A snapshot of a call's arguments, taken before it runs in this process; ``settle``
    undoes what the call changed beyond ``allowed`` and says what that was."""

    def __init__(self, args: Sequence[Any], kwargs: Mapping[str, Any], allowed: frozenset[str],
                 ranks: bool = False):
        self.allowed = allowed
        self.targets = Targets.of(args, kwargs, ranks)
        self.layouts = argument_layouts(args, kwargs, ranks)
        self.now = [layout.of for _, layout in self.layouts]  # the arguments themselves, as the call sees them
        self.tensors: list[tuple[str, _TensorState]] = []
        self.modules: list[tuple[torch.nn.Module, _Layout]] = []
        self.optimizers: list[tuple[torch.optim.Optimizer, Any, list[dict[str, Any]]]] = []
        for obj in self.targets.objects:
            if self.targets.kind[id(obj)] == "grads":
                continue  # a .grad is its tensor's: compared and put back with it
            if isinstance(obj, torch.Tensor):
                grad = obj.grad if obj.is_leaf else None
                self.tensors.append((self.targets.kind[id(obj)], _TensorState(
                    obj, obj.detach().clone(), None if grad is None else grad.detach().clone(),
                    obj.requires_grad)))
            elif isinstance(obj, torch.nn.Module):
                self.modules.append((obj, _module_layout(obj)))
            else:
                self.optimizers.append((obj, copy.deepcopy(obj.state), [
                    {k: copy.deepcopy(v) for k, v in g.items() if k != "params"} for g in obj.param_groups]))

    def settle(self) -> list[str]:
        """Undo what is not allowed; the sentences saying what it was."""
        said = changed_containers(self.layouts, self.now)
        if said:
            for _, containers in self.layouts:
                containers.restore()
        for kind, state in self.tensors:
            label = self.targets.label[id(state.tensor)]
            if kind not in self.allowed and not same_tensor(state.tensor, state.data):
                said.append(words.CHANGED_IN_PLACE.format(label=label))
                _restore_data(state.tensor, state.data)
            grad = state.tensor.grad if state.tensor.is_leaf else None
            if "grads" not in self.allowed and state.tensor.is_leaf and grad_changed(state.grad, grad):
                said.append(words.CHANGED_GRAD.format(label=label))
                state.tensor.grad = state.grad
            if kind not in self.allowed and state.tensor.is_leaf \
                    and state.tensor.requires_grad != state.requires_grad:
                said.append(words.CHANGED_REQUIRES_GRAD.format(label=label))
                state.tensor.requires_grad_(state.requires_grad)
        if "modules" not in self.allowed:
            for module, layout in self.modules:
                label = self.targets.label[id(module)]
                if _module_layout(module) != layout:
                    said.append(words.CHANGED_MODULE.format(label=label))
                    _restore_module(module, layout)
        if "optimizers" not in self.allowed:
            for opt, state, groups in self.optimizers:
                now = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
                if not same_state(opt.state, state) or now != groups:
                    said.append(words.CHANGED_OPTIMIZER.format(label=self.targets.label[id(opt)]))
                    opt.state.clear()
                    opt.state.update(state)
                    for group, old in zip(opt.param_groups, groups):
                        group.update(old)
        return said


def _restore_data(tensor: torch.Tensor, data: torch.Tensor) -> None:
    with torch.no_grad():
        if tensor.shape == data.shape and tensor.dtype == data.dtype:
            try:
                tensor.copy_(data)
                return
            except RuntimeError:  # an expanded (stride 0) tensor cannot be written into
                pass
        tensor.data = data.clone()


@dataclass
class _Layout:
    """Which objects a module holds where, and its training modes (the values of its
    tensors are snapshotted as tensors)."""

    key: tuple[Any, ...]
    objects: dict[str, Any]
    # each module's set of buffers kept out of its state_dict, and what the set held
    transient: tuple[tuple[torch.nn.Module, Any, frozenset[str]], ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Layout) and self.key == other.key


def _module_layout(module: torch.nn.Module) -> _Layout:
    named = [*module.named_parameters(), *module.named_buffers(), *module.named_modules()]
    transient = tuple((m, m._non_persistent_buffers_set, frozenset(m._non_persistent_buffers_set))
                      for m in module.modules())
    return _Layout((tuple(m.training for m in module.modules()),
                    tuple((n, id(o)) for n, o in named),
                    tuple((id(s), names) for _, s, names in transient)), dict(named), transient)


def _restore_module(module: torch.nn.Module, layout: _Layout) -> None:
    for m, training in zip(module.modules(), layout.key[0]):
        m.training = training
    for m, kept, names in layout.transient:  # which buffers a checkpoint leaves out
        m._non_persistent_buffers_set = kept
        kept.clear()
        kept.update(names)
    for name, obj in layout.objects.items():
        if not name:
            continue
        owner_name, _, attr = name.rpartition(".")
        owner = module.get_submodule(owner_name) if owner_name else module
        if isinstance(obj, torch.nn.Parameter):
            owner._parameters[attr] = obj
        elif isinstance(obj, torch.Tensor):
            owner._buffers[attr] = obj
        elif isinstance(obj, torch.nn.Module):
            owner._modules[attr] = obj


def same_state(a: Any, b: Any) -> bool:
    """Equal optimizer states (nested dicts and lists of tensors and numbers)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_tensor(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b))
    return bool(a == b)


@contextmanager
def guarded(args: Sequence[Any], kwargs: Mapping[str, Any], allowed: frozenset[str],
            mutations: list[str], ranks: bool = False) -> Iterator[None]:
    """Run the block; then undo what it changed of ``args`` beyond ``allowed`` and
    append the sentences to ``mutations`` (``ranks``: as ``Targets.of``)."""
    guard = ArgumentGuard(args, kwargs, allowed, ranks)
    try:
        yield
    finally:
        mutations += guard.settle()
