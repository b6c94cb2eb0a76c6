"""Mistake: keeps the mask as a plain attribute of the copy (``masked.mask = mask``). The
module does not know it: ``.to()`` leaves it behind, ``state_dict()`` forgets it."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_the_copy_holds_the_mask_as_a_buffer',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.mask = mask
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
