"""Mistake: torch.no_grad() without model.eval(): no graph is built, but Dropout still zeroes
values at random and BatchNorm normalises each batch with its own statistics (and moves its
running statistics). The notes warn that eval() and no_grad() are two different switches."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_predictions_match_the_model_in_eval_mode",)


def _outputs(model, inputs):
    with torch.no_grad():
        return [model(x) for x in inputs]


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
