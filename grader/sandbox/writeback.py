"""What a call did to its arguments, written into the grader's own objects only as far
as the function's spec lets it change them (``grader.contract.arguments``).
"""

from __future__ import annotations

from typing import Any

import torch

from grader.contract.arguments import Targets, grad_changed, same_tensor
from grader.sandbox import wire


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
                wire.write_back(original, new)
            elif wire.module_changed(original, new):
                self.mutations.append(f"changed {label}'s modules, parameters or training mode")
        elif kind in self.allowed:
            wire.write_back(original, new)
        elif wire.optimizer_changed(original, new):
            self.mutations.append(f"changed {label}'s state or options")

    def _tensor(self, original: torch.Tensor, new: Any, kind: str, label: str) -> None:
        if not isinstance(new, torch.Tensor):
            raise wire.WireError("a tensor came back as something else")
        if not same_tensor(original, new):
            if kind in self.allowed:
                wire.write_values(original, new)
            else:
                self.mutations.append(f"changed {label} in place")
        if original.is_leaf and grad_changed(original.grad, new.grad):
            if "grads" in self.allowed:
                wire.write_grad(original, new)
            else:
                self.mutations.append(f"changed {label}.grad")
        if original.is_leaf and new.requires_grad != original.requires_grad and (
                original.dtype.is_floating_point or original.dtype.is_complex):
            if kind in self.allowed:
                original.requires_grad_(new.requires_grad)
            else:
                self.mutations.append(f"changed {label}.requires_grad")
