"""Mistake: ``name.startswith(prefix)``: "layer1" freezes "layer10" too.

The usual freezing loop, ``if name.startswith(prefix): param.requires_grad = False`` over
``named_parameters()`` (helpers named ``freeze_layers(model, prefixes)`` in many public training
scripts), rewritten over the walk the spec allows (no code copied)."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_a_prefix_matches_whole_names_only',)


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
    for name, p in _every_parameter(model):
        if name.startswith(tuple(prefixes)):
            p.requires_grad = False
