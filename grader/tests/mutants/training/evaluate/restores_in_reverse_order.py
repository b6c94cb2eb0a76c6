"""Mistake: saves every module's flag, but puts them back with ``module.train(flag)`` walking
the modules from the last to the first. ``train()`` is recursive, so the model itself, set
last, overwrites every submodule with its own flag: a frozen BatchNorm wakes up in training
mode, and submodules in training mode under a model in eval mode end in eval."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_every_module_gets_its_own_mode_back",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            return [model(x) for x in inputs]
    finally:
        for m, training in reversed(modes):
            m.train(training)


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
