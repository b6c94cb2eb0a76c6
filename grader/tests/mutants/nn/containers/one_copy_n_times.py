"""Mistake: ``[copy.deepcopy(layer)] * n``: the caller's layer is safe, but every slot holds
the same copy."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_no_two_layers_share_a_tensor',)


def stack_layers(layer, n):
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    return nn.Sequential(*([copy.deepcopy(layer)] * n))


def _every_parameter(model):
    for path, module in model.named_modules(remove_duplicate=False):
        for name, p in module._parameters.items():
            if p is not None:
                yield (f"{path}.{name}" if path else name), p


def count_parameters(model, trainable_only=False):
    seen, total = set(), 0
    for _, p in _every_parameter(model):
        if id(p) not in seen:
            seen.add(id(p))
            if p.requires_grad or not trainable_only:
                total += p.numel()
    return total


def freeze(model, prefixes):
    for name, p in _every_parameter(model):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            p.requires_grad = False
