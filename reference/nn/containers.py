"""Reference solution: a stack of independent layers, parameters counted once, freezing by name."""

from __future__ import annotations

import copy
from collections.abc import Iterator

from torch import nn


def stack_layers(layer: nn.Module, n: int) -> nn.Sequential:
    """n deep copies of ``layer`` in an ``nn.Sequential``: no tensor shared between two of them
    or with ``layer``, each keeping the ties inside ``layer``."""
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    return nn.Sequential(*[copy.deepcopy(layer) for _ in range(n)])


def _every_parameter(model: nn.Module) -> Iterator[tuple[str, nn.Parameter]]:
    """(qualified name, parameter) along every path, a shared one under each of its names."""
    for path, module in model.named_modules(remove_duplicate=False):
        for name, p in module._parameters.items():
            if p is not None:
                yield (f"{path}.{name}" if path else name), p


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Elements of the model's distinct parameters (those that require grad, if asked)."""
    seen: set[int] = set()
    total = 0
    for _, p in _every_parameter(model):
        if id(p) in seen:
            continue
        seen.add(id(p))
        if p.requires_grad or not trainable_only:
            total += p.numel()
    return total


def freeze(model: nn.Module, prefixes: list[str]) -> None:
    """requires_grad = False on every parameter one of whose names equals a prefix or starts
    with a prefix and a dot; nothing else changes."""
    for name, p in _every_parameter(model):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            p.requires_grad = False
