"""Mistake: walks every path to every module (``named_modules(remove_duplicate=False)``) and
remembers no tensor: a shared submodule's tensors and a tied weight are listed under each
of their names."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_a_shared_tensor_is_listed_once_under_its_first_name',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
    return masked, dict(masked.state_dict())


def split_state(model):
    parameters, buffers = {}, {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        for table, out in ((module._parameters, parameters), (module._buffers, buffers)):
            for name, tensor in table.items():
                if tensor is not None:
                    out[f"{prefix}.{name}" if prefix else name] = tensor
    return parameters, buffers


def strip_prefix(state, prefix):
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
