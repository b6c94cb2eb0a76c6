"""Mistake: concatenates every batch's inputs and runs one forward on the whole set. In eval
mode the numbers match, but the memory the batches are there to save is spent at once."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_one_forward_per_batch",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            return model(torch.cat(inputs))
    finally:
        for m, training in modes:
            m.training = training


def predict(model: nn.Module, batches):
    if not batches:
        raise ValueError("no batch to predict")
    return _outputs(model, batches)


def evaluate(model: nn.Module, batches, loss_name):
    if not batches:
        raise ValueError("no batch to evaluate")
    outputs = _outputs(model, [x for x, _ in batches])
    return getattr(F, loss_name)(outputs, torch.cat([y for _, y in batches])), outputs
