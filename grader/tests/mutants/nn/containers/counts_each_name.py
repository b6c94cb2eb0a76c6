"""Mistake: sums over every name of every parameter without remembering which it has met: a
shared module, a tied weight and the notes' ModuleList([layer] * 3) count once per name."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_a_shared_parameter_counts_once',)


def stack_layers(layer, n):
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    return nn.Sequential(*[copy.deepcopy(layer) for _ in range(n)])


def _every_parameter(model):
    for path, module in model.named_modules(remove_duplicate=False):
        for name, p in module._parameters.items():
            if p is not None:
                yield (f"{path}.{name}" if path else name), p


def count_parameters(model, trainable_only=False):
    return sum(p.numel() for _, p in _every_parameter(model) if p.requires_grad or not trainable_only)


def freeze(model, prefixes):
    for name, p in _every_parameter(model):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            p.requires_grad = False
