"""What a call did to its arguments, written into the grader's own objects only as far
as the function's spec lets it change them (``grader.contract.arguments``).
"""

from __future__ import annotations

from typing import Any

import torch

from grader.contract.arguments import Targets, grad_changed, same_state, same_tensor
from grader.sandbox.wire import WireError, transient_buffers


class WriteBack:
    """Writes what a call did to its arguments into the grader's own objects, as far as
    the function's spec lets it change them (``grader.contract.arguments``); the rest
    is not written, only told (``mutations``): the test's objects stay what the test
    made, so no oracle computed from them after the call can be steered."""

    def __init__(self, targets: Targets, allowed: frozenset[str], mutations: list[str]):
        self.targets, self.allowed, self.mutations = targets, allowed, mutations

    def __call__(self, original: Any, new: Any) -> None:
        kind = self.targets.kind.get(id(original), "tensors")
        label = self.targets.label.get(id(original), "an argument")
        if isinstance(original, torch.Tensor):
            self._tensor(original, new, kind, label)
        elif isinstance(original, torch.nn.Module):
            if kind in self.allowed:
                write_back(original, new)
            elif module_changed(original, new):
                self.mutations.append(f"changed {label}'s modules, parameters or training mode")
        elif kind in self.allowed:
            write_back(original, new)
        elif optimizer_changed(original, new):
            self.mutations.append(f"changed {label}'s state or options")

    def _tensor(self, original: torch.Tensor, new: Any, kind: str, label: str) -> None:
        if not isinstance(new, torch.Tensor):
            raise WireError("a tensor came back as something else")
        if not same_tensor(original, new):
            if kind in self.allowed:
                write_values(original, new)
            else:
                self.mutations.append(f"changed {label} in place")
        if original.is_leaf and grad_changed(original.grad, new.grad):
            if "grads" in self.allowed:
                write_grad(original, new)
            else:
                self.mutations.append(f"changed {label}.grad")
        if original.is_leaf and new.requires_grad != original.requires_grad and (
                original.dtype.is_floating_point or original.dtype.is_complex):
            if kind in self.allowed:
                original.requires_grad_(new.requires_grad)
            else:
                self.mutations.append(f"changed {label}.requires_grad")


def write_values(original: torch.Tensor, new: torch.Tensor) -> None:
    """Make the grader's tensor hold the values of the worker's copy."""
    with torch.no_grad():
        try:
            if new.shape != original.shape or new.dtype != original.dtype:
                raise RuntimeError("reshaped")
            original.copy_(new)
        except RuntimeError:  # reshaped, or an expanded tensor copy_ cannot write
            original.data = new.to(original.device)


def write_grad(original: torch.Tensor, new: torch.Tensor) -> None:
    original.grad = None if new.grad is None else new.grad.to(original.device)


def module_changed(original: torch.nn.Module, new: torch.nn.Module) -> bool:
    """Its own training mode, a parameter replaced by another, a parameter or buffer
    added or removed (a mask registered on the caller's module), or a buffer made
    persistent or not."""
    return (original.training != new.training
            or set(original._parameters) != set(new._parameters) or set(original._buffers) != set(new._buffers)
            or set(transient_buffers(original)) != set(transient_buffers(new))
            or any(name in original._parameters and p is not original._parameters[name]
                   for name, p in new._parameters.items()))


def optimizer_changed(original: torch.optim.Optimizer, new: Any) -> bool:
    if not isinstance(new, torch.optim.Optimizer) or len(new.param_groups) != len(original.param_groups):
        return True
    if any({k: v for k, v in a.items() if k != "params"} != {k: v for k, v in b.items() if k != "params"}
           for a, b in zip(original.param_groups, new.param_groups)):
        return True
    return not same_state(dict(original.state), dict(new.state))


def write_back(original: Any, new: Any) -> None:
    """Make the grader's ``original`` hold what the worker's copy ``new`` holds."""
    if isinstance(original, torch.Tensor):
        if not isinstance(new, torch.Tensor):
            raise WireError("a tensor came back as something else")
        write_values(original, new)
        if original.is_leaf:
            write_grad(original, new)
            if original.dtype.is_floating_point or original.dtype.is_complex:
                original.requires_grad_(new.requires_grad)
    elif isinstance(original, torch.nn.Module):
        if not isinstance(new, torch.nn.Module):
            raise WireError("a module came back as something else")
        original.training = new.training  # its own mode: each submodule is written back in its turn
        # which of its buffers stay out of its state_dict (a buffer the call added does not come back)
        original._non_persistent_buffers_set = {n for n in transient_buffers(new) if n in original._buffers}
        for name, p in new._parameters.items():
            if name in original._parameters and p is not original._parameters[name]:
                original._parameters[name] = p  # the student replaced a parameter
    elif isinstance(original, torch.optim.Optimizer):
        if not isinstance(new, torch.optim.Optimizer) or len(new.param_groups) != len(original.param_groups):
            raise WireError("an optimizer came back changed beyond recognition")
        for old_group, new_group in zip(original.param_groups, new.param_groups):
            old_group.update({k: v for k, v in new_group.items() if k != "params"})
        original.state.clear()
        original.state.update(new.state)
