"""Mistake: one shared hook function whose name is read when it fires (a closure over the loop
variable): every hook stores under the last name."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_activations_match_a_forward_by_hand',)


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
            def hook(module, inputs, output):
                captured[name] = output.detach().clone()
            handles.append(model.get_submodule(name).register_forward_hook(hook))
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return {n: captured.get(n, captured[name]) for n in names}


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """One capture per batch, in order."""
    return [capture_activations(model, x, names) for x in batches]
