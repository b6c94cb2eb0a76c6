"""Right, written otherwise: the Sequential is built from an OrderedDict of named copies, the
count keeps one size per parameter id in a dict, and a prefix matches when its dotted parts are
the first parts of a name (which is the spec's "equal, or followed by a dot")."""

from __future__ import annotations

import copy
from collections import OrderedDict

from torch import nn


def stack_layers(layer: nn.Module, n: int) -> nn.Sequential:
    if n < 0:
        raise ValueError("n must not be negative")
    return nn.Sequential(OrderedDict((str(i), copy.deepcopy(layer)) for i in range(n)))


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    distinct = {id(p): p for _, module in model.named_modules(remove_duplicate=False)
                for p in module._parameters.values() if p is not None}
    return int(sum(p.numel() for p in distinct.values() if p.requires_grad or not trainable_only))


def freeze(model: nn.Module, prefixes: list[str]) -> None:
    wanted = [prefix.split(".") for prefix in prefixes]
    for path, module in model.named_modules(remove_duplicate=False):
        for name, p in module._parameters.items():
            if p is None:
                continue
            parts = (path.split(".") if path else []) + [name]
            if any(parts[:len(want)] == want for want in wanted):
                p.requires_grad = False
