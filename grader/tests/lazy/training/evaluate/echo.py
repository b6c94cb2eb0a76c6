"""Do-nothing: the inputs handed back as the outputs (and the targets' mean as the loss)."""

import torch


def predict(model, batches):
    return torch.cat(batches)


def evaluate(model, batches, loss_name):
    targets = torch.cat([y for _, y in batches])
    loss = targets.double().mean() if targets.numel() else torch.zeros((), dtype=torch.float64)
    return loss, torch.cat([x for x, _ in batches])
