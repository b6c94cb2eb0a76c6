"""Mistake: freezes each named submodule with the forbidden ``requires_grad_``."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_freezes_exactly_the_parameters_under_a_prefix',)


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
    seen, total = set(), 0
    for _, p in _every_parameter(model):
        if id(p) not in seen:
            seen.add(id(p))
            if p.requires_grad or not trainable_only:
                total += p.numel()
    return total


def freeze(model, prefixes):
    for path, module in model.named_modules(remove_duplicate=False):
        if path in prefixes:
            module.requires_grad_(False)
        for name, p in module._parameters.items():
            full = f"{path}.{name}" if path else name
            if p is not None and full in prefixes:
                p.requires_grad = False
