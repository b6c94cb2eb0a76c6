"""Mistake: recurses into the children before listing a module's own entries, so a module
that holds a parameter and a submodule lists the submodule's first."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_the_entries_come_in_named_parameters_order',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
    return masked, dict(masked.state_dict())


def split_state(model):
    parameters, buffers = {}, {}
    seen, walked = set(), set()

    def walk(module, prefix):
        if id(module) in walked:
            return
        walked.add(id(module))
        for child_name, child in module._modules.items():
            if child is not None:
                walk(child, f"{prefix}{child_name}.")
        for table, out in ((module._parameters, parameters), (module._buffers, buffers)):
            for name, tensor in table.items():
                if tensor is not None and id(tensor) not in seen:
                    seen.add(id(tensor))
                    out[prefix + name] = tensor

    walk(model, "")
    return parameters, buffers


def strip_prefix(state, prefix):
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
