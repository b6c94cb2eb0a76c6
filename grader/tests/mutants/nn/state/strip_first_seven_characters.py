"""Mistake: cuts the first 7 characters (``len("module.")``) off every key, whether or not it
starts with the prefix, and whatever the prefix given.

Provenance: naodell/hgcal_gravnet_model, scripts/helper_funcs.py (commit
18e708a48a67bb1f9e4dc133cfdd4aac20b921f0): ``convert_parallel_model`` keeps ``k[7:]`` of every
key. Rewritten here (no code copied)."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_a_checkpoint_not_every_key_of_which_has_the_prefix_is_kept', 'test_another_prefix')


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
    return {key[7:]: value for key, value in state.items()}
