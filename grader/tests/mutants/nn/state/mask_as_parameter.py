"""Mistake: registers the mask as a Parameter (frozen, so even a bool mask is accepted):
``parameters()`` hands it to the optimizer, and the checkpoint always holds it."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_the_copy_holds_the_mask_as_a_buffer',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.mask = nn.Parameter(mask, requires_grad=False)
    return masked, dict(masked.state_dict())


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
