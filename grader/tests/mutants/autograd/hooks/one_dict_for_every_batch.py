"""Mistake: capture_batches hooks once and fills one dict for every batch: each entry of the list
is the same dict, holding the last batch's activations."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_each_batch_gets_its_own_activations',)


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
    return {name: captured[name] for name in names}


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    captured: dict[str, torch.Tensor] = {}
    handles = [model.get_submodule(name).register_forward_hook(
        lambda m, i, o, name=name: captured.__setitem__(name, o.detach().clone())) for name in names]
    with torch.no_grad():
        for x in batches:
            model(x)
    for handle in handles:
        handle.remove()
    return [captured for _ in batches]
