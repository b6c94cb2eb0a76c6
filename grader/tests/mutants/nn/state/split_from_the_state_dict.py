"""Mistake: splits ``state_dict(keep_vars=True)`` by type: a checkpoint lists a tied weight
and a shared submodule's tensors under each of their names."""

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
    for name, tensor in model.state_dict(keep_vars=True).items():
        (parameters if isinstance(tensor, nn.Parameter) else buffers)[name] = tensor
    return parameters, buffers


def strip_prefix(state, prefix):
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
