"""Right, written otherwise: the checkpoint is built by hand in ``state_dict``'s own order
(a module's parameters, then its persistent buffers, then each child's, a tied weight under
every name it has), the split walks a stack of (path, module) pairs, and the prefix goes with
``str.partition`` once every key is known to start with it.

Provenance of the prefix: DDP checkpoint loaders of the form ``has_module_prefix =
all(k.startswith('module.') for k in state_dict)`` then ``k.partition('module.')[2]``, found
in several public training scripts; the first occurrence of the prefix is the leading one once
every key starts with it. Rewritten here for any prefix (no code copied).
"""

from __future__ import annotations

import copy

import torch
from torch import nn


def _checkpoint(module: nn.Module, path: str, out: dict[str, torch.Tensor]) -> None:
    for name, tensor in module._parameters.items():
        if tensor is not None:
            out[path + name] = tensor.detach()
    for name, buffer in module._buffers.items():
        if buffer is not None and name not in module._non_persistent_buffers_set:
            out[path + name] = buffer.detach()
    for name, child in module._modules.items():
        if child is not None:
            _checkpoint(child, f"{path}{name}.", out)


def masked_copy(module: nn.Module, mask: torch.Tensor,
                persistent: bool = True) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
    checkpoint: dict[str, torch.Tensor] = {}
    _checkpoint(masked, "", checkpoint)
    return masked, checkpoint


def split_state(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    parameters: dict[str, torch.Tensor] = {}
    buffers: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    walked: set[int] = set()
    stack: list[tuple[str, nn.Module]] = [("", model)]
    while stack:
        path, module = stack.pop()
        if id(module) in walked:
            continue
        walked.add(id(module))
        for name, tensor in module._parameters.items():
            if tensor is not None and id(tensor) not in seen:
                seen.add(id(tensor))
                parameters[path + name] = tensor
        for name, buffer in module._buffers.items():
            if buffer is not None and id(buffer) not in seen:
                seen.add(id(buffer))
                buffers[path + name] = buffer
        children = [(f"{path}{name}.", child) for name, child in module._modules.items() if child is not None]
        stack.extend(reversed(children))  # the first child is walked next, as named_modules() does
    return parameters, buffers


def strip_prefix(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    if prefix and all(key.startswith(prefix) for key in state):
        return {key.partition(prefix)[2]: value for key, value in state.items()}
    return dict(state)
