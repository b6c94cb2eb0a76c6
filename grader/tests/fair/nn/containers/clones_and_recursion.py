"""Right, written otherwise: the copies are made as the Annotated Transformer's and torch's own
``clones`` make them (a list of ``copy.deepcopy(layer)``, one per slot), the count and the freeze
recurse through ``_modules`` by hand, carrying each path.

Provenance of the copies: pytorch/pytorch, torch/nn/modules/transformer.py (commit
d5cc3c9355fa15f557d204a9a5154f905a5a6055): ``_get_clones(module, N)`` is a ModuleList of
``copy.deepcopy(module)`` for each of N; nikitakapitan/transformers, src/transformers/Encoder.py
(commit 99834a49354386aec592e0aac93873cedf58d914) builds its encoder stack the same way.
Rewritten here into a Sequential (no code copied).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from torch import nn


def stack_layers(layer: nn.Module, n: int) -> nn.Sequential:
    if n < 0:
        raise ValueError(f"cannot stack {n} layers")
    clones = [copy.deepcopy(layer) for _ in range(n)]
    return nn.Sequential(*clones)


def _visit(module: nn.Module, path: str, action: Callable[[str, nn.Parameter], None]) -> None:
    """``action(name, p)`` for every parameter along every path (a shared one once per path)."""
    for name, p in module._parameters.items():
        if p is not None:
            action(path + name, p)
    for name, child in module._modules.items():
        if child is not None:
            _visit(child, f"{path}{name}.", action)


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    sizes: dict[int, int] = {}

    def add(_name: str, p: nn.Parameter) -> None:
        if p.requires_grad or not trainable_only:
            sizes[id(p)] = p.numel()

    _visit(model, "", add)
    return sum(sizes.values())


def freeze(model: nn.Module, prefixes: list[str]) -> None:
    def maybe_freeze(name: str, p: nn.Parameter) -> None:
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                p.requires_grad = False

    _visit(model, "", maybe_freeze)
