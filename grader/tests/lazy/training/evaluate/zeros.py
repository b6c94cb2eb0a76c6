"""Do-nothing: no forward at all; zeros of one column per sample, and a zero loss."""

import torch


def predict(model, batches):
    return torch.zeros(sum(x.shape[0] for x in batches), 1, dtype=torch.float64)


def evaluate(model, batches, loss_name):
    outputs = torch.zeros(sum(x.shape[0] for x, _ in batches), 1, dtype=torch.float64)
    return torch.zeros((), dtype=torch.float64), outputs
