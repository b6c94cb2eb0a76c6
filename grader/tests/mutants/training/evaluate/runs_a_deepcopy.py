"""Mistake: evaluates a copy.deepcopy of the model in eval mode and leaves the model itself
alone: the modes need no restoring, but every evaluation holds a second copy of the model in
memory, and the model handed in never runs."""

import copy

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_one_forward_per_batch",)


def _outputs(model, inputs):
    twin = copy.deepcopy(model).eval()
    with torch.no_grad():
        return [twin(x) for x in inputs]


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
