"""Mistake: remembers only the model's own flag and, if it was training, calls model.train()
afterwards: the submodules' own flags are forgotten (a BatchNorm frozen in eval mode wakes up
in training mode; a root in eval mode over training children leaves them all in eval).

Provenance: Chainso/HLRL, hlrl/torch/utils/contexts/training.py (commit
6b59f747228422b982b2b216509ff45cbaf327a4): the ``evaluate(module)`` context manager keeps
``module.training``, calls ``module.eval()``, and in its ``finally`` calls ``module.train()``
when that flag was True. Rewritten here as a function around the forwards (no code copied);
its no_grad is this drill's (the context manager leaves it to its caller)."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_every_module_gets_its_own_mode_back",)


def _outputs(model, inputs):
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            return [model(x) for x in inputs]
    finally:
        if was_training:
            model.train()


def predict(model: nn.Module, batches):
    if not batches:
        raise ValueError("no batch to predict")
    return torch.cat(_outputs(model, batches))


def evaluate(model: nn.Module, batches, loss_name):
    if not batches:
        raise ValueError("no batch to evaluate")
    outputs = _outputs(model, [x for x, _ in batches])
    n = sum(out.shape[0] for out in outputs)
    loss = sum(getattr(F, loss_name)(out, y) * (out.shape[0] / n) for out, (_, y) in zip(outputs, batches))
    return loss, torch.cat(outputs)
