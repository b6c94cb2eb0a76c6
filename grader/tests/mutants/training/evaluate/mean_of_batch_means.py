"""Mistake: the loss is the plain mean of the per-batch mean losses, right only when every
batch has the same size: a short last batch weighs as much as a full one."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_loss_is_the_mean_over_every_sample",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            return [model(x) for x in inputs]
    finally:
        for m, training in modes:
            m.training = training


def predict(model: nn.Module, batches):
    if not batches:
        raise ValueError("no batch to predict")
    return torch.cat(_outputs(model, batches))


def evaluate(model: nn.Module, batches, loss_name):
    if not batches:
        raise ValueError("no batch to evaluate")
    outputs = _outputs(model, [x for x, _ in batches])
    losses = [getattr(F, loss_name)(out, y) for out, (_, y) in zip(outputs, batches)]
    return torch.stack(losses).mean(), torch.cat(outputs)
