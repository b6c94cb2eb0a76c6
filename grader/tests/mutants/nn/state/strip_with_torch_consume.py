"""Mistake: calls torch's forbidden ``consume_prefix_in_state_dict_if_present`` on a copy."""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

CAUGHT_BY = ('test_a_wrapped_checkpoint_loses_the_prefix',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
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
    out = dict(state)
    consume_prefix_in_state_dict_if_present(out, prefix)
    return out
