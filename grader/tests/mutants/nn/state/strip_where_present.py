"""Mistake: strips the prefix from each key that has it and keeps the others, so the bare
checkpoint of a model with a submodule named ``module`` loses that submodule's name (what
torch's own ``consume_prefix_in_state_dict_if_present`` and timm's ``clean_state_dict`` do).

Provenance: meaten/RBPN_NTIRE2021, model/utils/misc.py (commit
a908a89b34f17ce2d25b817231fda01a4c284bd3): ``fix_model_state_dict`` takes ``name[7:]`` of each
key that starts with ``'module.'``. Rewritten here for any prefix (no code copied)."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_a_checkpoint_not_every_key_of_which_has_the_prefix_is_kept',)


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
    return {(key[len(prefix):] if key.startswith(prefix) else key): value for key, value in state.items()}
