"""Mistake: saves every module's flag and puts each back, but after the loop rather than in a
finally: a batch that raises skips the restore and leaves the model in eval mode."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_modes_come_back_when_a_batch_raises",)


def _outputs(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    with torch.no_grad():
        outputs = [model(x) for x in inputs]
    for m, training in modes:
        m.training = training
    return outputs


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
