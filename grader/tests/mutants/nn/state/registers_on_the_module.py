"""Mistake: registers the mask on the caller's module and hands that module back as the
"copy": the caller's model changes, and nothing is copied."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_the_copy_holds_the_mask_as_a_buffer',)


def masked_copy(module, mask, persistent=True):
    module.register_buffer("mask", mask, persistent=persistent)
    return module, dict(module.state_dict())


def split_state(model):
    parameters, buffers = {}, {}
    seen = set()
    for prefix, module in model.named_modules():
        for table, out in ((module._parameters, parameters), (module._buffers, buffers)):
            for name, tensor in table.items():
                if tensor is not None and id(tensor) not in seen:
                    seen.add(id(tensor))
                    out[f"{prefix}.{name}" if prefix else name] = tensor
    return parameters, buffers


def strip_prefix(state, prefix):
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
