"""Mistake: uses the layer itself for the first slot and copies for the others: training the
stack trains the caller's layer."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_no_two_layers_share_a_tensor',)


def stack_layers(layer, n):
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    return nn.Sequential(*[layer if i == 0 else copy.deepcopy(layer) for i in range(n)])


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
