"""Mistake: model.train() at the end, in a finally: every module comes back in training mode,
a frozen BatchNorm that came in eval mode included, and a model that came wholly in eval mode."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_every_module_gets_its_own_mode_back",)


def _outputs(model, inputs):
    model.eval()
    try:
        with torch.no_grad():
            return [model(x) for x in inputs]
    finally:
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
