"""Mistake: looks at the first key only and, if it starts with ``module``, cuts 7 characters
off every key: a bare model whose first submodule is named ``module`` is mangled.

Provenance: mlfoundations/open_clip, src/open_clip/factory.py (commit
008046c6b9c96e664f164efcfc75c352fe0f7d56): ``load_state_dict`` tests
``next(iter(state_dict.items()))[0].startswith('module')`` and then keeps ``k[7:]`` of every
key. Rewritten here for the prefix given (no code copied)."""

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
    if state and next(iter(state)).startswith(prefix):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
