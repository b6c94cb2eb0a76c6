"""Mistake: a forward PRE-hook, which sees the module's input, not its output."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_activations_match_a_forward_by_hand', 'test_an_inplace_layer_after_a_hooked_one_changes_nothing')


def capture_activations(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Hook every named submodule, run the model once, unhook (whatever happens)."""
    captured: dict[str, torch.Tensor] = {}
    handles = []

    def keeper(name: str):
        def hook(module: nn.Module, inputs: Any) -> None:
            captured[name] = inputs[0].detach().clone()
        return hook

    try:
        for name in names:
            handles.append(model.get_submodule(name).register_forward_pre_hook(keeper(name)))
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return {name: captured[name] for name in names}


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    return [capture_activations(model, x, names) for x in batches]
