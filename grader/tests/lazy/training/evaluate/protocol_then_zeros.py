"""Do-nothing behind the whole protocol: ValueError for no batch; every module's flag saved,
eval mode, torch.no_grad(), one forward per batch, every flag put back in a finally: and then
the outputs thrown away: zeros of their shape, and a zero loss."""

import torch


def _shapes(model, inputs):
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        with torch.no_grad():
            return [model(x) for x in inputs]
    finally:
        for m, training in modes:
            m.training = training


def predict(model, batches):
    if not batches:
        raise ValueError("no batch to predict")
    return torch.zeros_like(torch.cat(_shapes(model, batches)))


def evaluate(model, batches, loss_name):
    if not batches:
        raise ValueError("no batch to evaluate")
    outputs = torch.zeros_like(torch.cat(_shapes(model, [x for x, _ in batches])))
    return torch.zeros((), dtype=outputs.dtype), outputs
