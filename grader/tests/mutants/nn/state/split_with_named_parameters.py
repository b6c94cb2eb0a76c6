"""Mistake: calls the forbidden ``named_parameters`` and ``named_buffers``."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_split_state_matches_named_parameters_and_named_buffers',)


def masked_copy(module, mask, persistent=True):
    masked = copy.deepcopy(module)
    masked.register_buffer("mask", mask, persistent=persistent)
    return masked, dict(masked.state_dict())


def split_state(model):
    return dict(model.named_parameters()), dict(model.named_buffers())


def strip_prefix(state, prefix):
    if all(key.startswith(prefix) for key in state):
        return {key[len(prefix):]: value for key, value in state.items()}
    return dict(state)
