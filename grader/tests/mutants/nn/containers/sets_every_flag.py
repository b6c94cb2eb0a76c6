"""Mistake: sets every parameter's flag from the match (``requires_grad = not matched``), which
unfreezes what was frozen before.

Provenance: trewto/Bangladeshi-Vehicle-Count-Using-YOLO-8-11, train.py (commit
4ee7e245da1e9769a7b0df01a60c336a48fe5802): ``freeze_layer`` sets ``v.requires_grad = True`` on
every parameter, then False on those whose name holds one of the frozen layers' names (the
recipe of ultralytics' transfer-learning guide); icepoint666/itsumo-cv,
Pytorch/pytorch冻结想冻结的预训练模型中的某一层.md (commit 0a503d3c08bae2fe104ee1e3f19261f531ed4077)
sets False on the listed names and True on every other. Rewritten here with the spec's
prefixes (no code copied)."""

from __future__ import annotations

import copy

from torch import nn

CAUGHT_BY = ('test_other_parameters_keep_their_flag',)


def stack_layers(layer, n):
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    return nn.Sequential(*[copy.deepcopy(layer) for _ in range(n)])


def _every_parameter(model):
    for path, module in model.named_modules(remove_duplicate=False):
        for name, p in module._parameters.items():
            if p is not None:
                yield (f"{path}.{name}" if path else name), p


def count_parameters(model, trainable_only=False):
    seen, total = set(), 0
    for _, p in _every_parameter(model):
        if id(p) not in seen:
            seen.add(id(p))
            if p.requires_grad or not trainable_only:
                total += p.numel()
    return total


def freeze(model, prefixes):
    for name, p in _every_parameter(model):
        p.requires_grad = not any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)
