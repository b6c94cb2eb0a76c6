"""Mistake: returns the dict the hooks filled, whose keys come in the order the hooks fired
(the forward's order, a parent after its children), not in the order of ``names``."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_the_dict_follows_the_order_of_names',)


def capture_activations(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Hook every named submodule, run the model once, unhook (whatever happens)."""
    captured: dict[str, torch.Tensor] = {}
    handles = []

    def keeper(name: str):
        def hook(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
            captured[name] = output.detach().clone()
        return hook

    try:
        for name in names:
            handles.append(model.get_submodule(name).register_forward_hook(keeper(name)))
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return captured


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    return [capture_activations(model, x, names) for x in batches]
