"""Mistake (an automated mutant: the ``finally`` deleted, its try body kept): the hooks are
removed after a forward that returns, and left on the model when the forward raises."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_hooks_are_removed_when_the_forward_raises',)


def capture_activations(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Hook every named submodule, run the model once, unhook (whatever happens)."""
    captured: dict[str, torch.Tensor] = {}
    handles = []

    def keeper(name: str):
        def hook(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
            captured[name] = output.detach().clone()
        return hook

    for name in names:
        handles.append(model.get_submodule(name).register_forward_hook(keeper(name)))
    with torch.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return {name: captured[name] for name in names}


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    return [capture_activations(model, x, names) for x in batches]
