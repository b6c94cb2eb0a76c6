"""Mistake: sums ``numel`` over ``state_dict()``: the buffers count too, and a shared weight
once per name."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_counts_every_parameter_element', 'test_a_shared_parameter_counts_once')


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
    state = model.state_dict(keep_vars=True)
    return sum(t.numel() for t in state.values() if t.requires_grad or not trainable_only)


def freeze(model, prefixes):
    for name, p in _every_parameter(model):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            p.requires_grad = False
