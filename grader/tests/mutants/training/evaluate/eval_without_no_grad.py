"""Mistake: model.eval() without torch.no_grad(): the values are right, but every output (and
the loss) carries a graph through the model parameters. The notes warn: model.eval() is not
torch.no_grad()."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_outputs_carry_no_graph",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
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
    n = sum(out.shape[0] for out in outputs)
    loss = sum(getattr(F, loss_name)(out, y) * (out.shape[0] / n) for out, (_, y) in zip(outputs, batches))
    return loss, torch.cat(outputs)
