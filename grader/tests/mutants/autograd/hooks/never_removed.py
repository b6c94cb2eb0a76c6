"""Mistake: the handles are never removed, and the dict the hooks fill is the one returned: each
capture's hooks keep firing on later forwards and write the later batches' activations into the
earlier dicts."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_hooks_are_removed_after_each_capture', 'test_each_batch_gets_its_own_activations')


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
        pass
    return captured


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    return [capture_activations(model, x, names) for x in batches]
