"""Mistake: calls model.eval() and never switches back, as the evaluation loops of many
examples do: a model that came in training mode leaves in eval mode (the next epoch trains
with Dropout off and BatchNorm frozen). Its loss is right: summed with reduction="sum" and
divided by the number of samples.

Provenance: pytorch/examples, mnist/main.py (commit 09654b86fcd7b489840546d9ad0cf9b629dc50d0),
``test(model, device, test_loader)``: ``model.eval()``, then under ``torch.no_grad()`` adds
``F.nll_loss(output, target, reduction='sum').item()`` per batch and divides by the size of
the data set; the caller's next ``train()`` calls ``model.train()`` itself. Rewritten here for
this drill's loss names and return values (no code copied)."""

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ("test_every_module_gets_its_own_mode_back", "test_modes_come_back_when_a_batch_raises")


def predict(model: nn.Module, batches):
    if not batches:
        raise ValueError("no batch to predict")
    model.eval()
    with torch.no_grad():
        return torch.cat([model(x) for x in batches])


def evaluate(model: nn.Module, batches, loss_name):
    if not batches:
        raise ValueError("no batch to evaluate")
    model.eval()
    total, count, outputs = 0.0, 0, []
    with torch.no_grad():
        for x, y in batches:
            out = model(x)
            total += getattr(F, loss_name)(out, y, reduction="sum").item()
            count += y.numel()
            outputs.append(out)
    outputs = torch.cat(outputs)
    return torch.tensor(total / count, dtype=outputs.dtype), outputs
