"""Reference solution: a model's state (parameters, buffers, a checkpoint's keys) by hand."""

from __future__ import annotations

import copy

import torch
from torch import nn


def masked_copy(module: nn.Module, mask: torch.Tensor,
                persistent: bool = True) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """A deep copy of ``module`` carrying ``mask`` as the buffer ``"mask"``, and what the
    copy's ``state_dict()`` holds, as a plain dict."""
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
    return masked, dict(masked.state_dict())


def split_state(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """``(parameters, buffers)``: qualified name -> the model's own tensor, each tensor once
    (under the first name that reaches it), entries that hold None left out."""
    parameters: dict[str, torch.Tensor] = {}
    buffers: dict[str, torch.Tensor] = {}
    seen_parameters: set[int] = set()
    seen_buffers: set[int] = set()
    for prefix, module in model.named_modules():
        for table, out, seen in ((module._parameters, parameters, seen_parameters),
                                 (module._buffers, buffers, seen_buffers)):
            for name, tensor in table.items():
                if tensor is None or id(tensor) in seen:
                    continue
                seen.add(id(tensor))
                out[f"{prefix}.{name}" if prefix else name] = tensor
    return parameters, buffers


def strip_prefix(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """``state`` with ``prefix`` taken off the front of every key when every key starts
    with it; otherwise the same entries. Order and tensors kept."""
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
