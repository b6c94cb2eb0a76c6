"""Right, written otherwise: the mask is registered as a clone, the split recurses through
``_modules`` by hand (remembering the modules and the tensors it has met, as torch's own walk
does), and the prefix goes with ``str.removeprefix`` once every key is known to carry it.

Provenance of the split: pytorch/pytorch, torch/nn/modules/module.py (commit
d4cc86dc3cf9b2b5f59d1b24af4c5e430f96ab7b): ``Module._named_members`` walks
``named_modules()`` with a memo of the members already yielded, skipping None, and joins
the module's prefix and the member's name with a dot. Rewritten here as a recursion over
the tables (no code copied).
"""

from __future__ import annotations

import copy

import torch
from torch import nn


def masked_copy(module: nn.Module, mask: torch.Tensor,
                persistent: bool = True) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask.clone(), persistent)
    return masked, {name: value for name, value in masked.state_dict().items()}


def split_state(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    found: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]] = ({}, {})
    met_tensors: set[int] = set()
    met_modules: set[int] = set()

    def visit(module: nn.Module, path: str) -> None:
        if id(module) in met_modules:
            return
        met_modules.add(id(module))
        entries: list[tuple[dict[str, torch.Tensor], str, torch.Tensor | None]] = [
            *((found[0], name, p) for name, p in module._parameters.items()),
            *((found[1], name, b) for name, b in module._buffers.items())]
        for out, name, tensor in entries:
            if tensor is not None and id(tensor) not in met_tensors:
                met_tensors.add(id(tensor))
                out[path + name] = tensor
        for name, child in module._modules.items():
            if child is not None:
                visit(child, f"{path}{name}.")

    visit(model, "")
    return found


def strip_prefix(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    if any(not key.startswith(prefix) for key in state):
        return {key: value for key, value in state.items()}
    return {key.removeprefix(prefix): value for key, value in state.items()}
