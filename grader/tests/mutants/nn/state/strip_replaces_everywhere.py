"""Mistake: ``key.replace(prefix, "")`` cuts the prefix out wherever it occurs, so a
submodule named ``module`` or ``submodule`` loses part of its name.

Provenance: elias-ramzi/SupRank, suprank/lib/adapt_checkpoint.py (commit
99041e84ec6987780e395d71b951ecf98555cc13): ``adapt_checkpoint(state_dict, remove='module.')``
builds a new OrderedDict of ``key.replace(remove, "")``; DingXiaoH/RepVGG's convert.py
(commit dc0b38416acd7951780810f4c2beae2f52891fb4) strips its checkpoints the same way.
Rewritten here over a plain dict (no code copied)."""

from __future__ import annotations

import copy

import torch
from torch import nn

CAUGHT_BY = ('test_only_the_leading_prefix_is_removed',)


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
    return {key.replace(prefix, ""): value for key, value in state.items()}
