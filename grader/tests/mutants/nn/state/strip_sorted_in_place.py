"""Mistake: renames the keys in place, walking them sorted, and hands the same dict back: the
entries come back in sorted order (and the caller's dict is changed).

Provenance: donchesworth/hugging-quik, hugging_quik/utils.py (commit
e9a0cf40447e450402ccaf77b9977d22338b22b3): its copy of torch 1.9's
``consume_prefix_in_state_dict_if_present`` pops and re-inserts each prefixed key in
``sorted(state_dict.keys())`` order. Rewritten here to return the dict (no code copied)."""

from __future__ import annotations

import copy

import torch
from torch import nn

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
    for key in sorted(state):
        if key.startswith(prefix):
            state[key[len(prefix):]] = state.pop(key)
    return state
