"""Do-nothing, the best per function: predict hands back the inputs, evaluate raises the
spec's ValueError."""

import torch


def predict(model, batches):
    return torch.cat(batches)


def evaluate(model, batches, loss_name):
    raise ValueError("no batch to evaluate")
