"""Mistake: torch.set_grad_enabled(False) instead of a with torch.no_grad(): block, never
switched back: the outputs carry no graph, but autograd stays off for whatever the caller
does next (the training step after the evaluation builds no graph and learns nothing)."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_grad_mode_and_random_state_are_left_alone",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    torch.set_grad_enabled(False)
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
