"""Mistake (an automated mutant: ``detach`` swapped for its in-place twin ``detach_``): the
hook detaches the module's own output in place before copying it. Under no_grad most outputs
do not mind, but a view (what Unflatten and Flatten return) refuses ``detach_()`` ("Can't
detach views in-place"), and an Identity hands its hook x itself, so the caller's x loses
its requires_grad."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

CAUGHT_BY = ('test_activations_match_a_forward_by_hand', 'test_model_and_x_are_left_alone')


def capture_activations(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Hook every named submodule, run the model once, unhook (whatever happens)."""
    captured: dict[str, torch.Tensor] = {}
    handles = []

    def keeper(name: str):
        def hook(module: nn.Module, inputs: Any, output: torch.Tensor) -> None:
            captured[name] = output.detach_().clone()
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
    return [capture_activations(model, x, names) for x in batches]
