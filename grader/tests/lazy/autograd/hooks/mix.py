"""Do-nothing per function: the model's final output under every name (right only for the
name "" and a hooked last layer); capture_batches the same per batch."""

import torch


def capture_activations(model, x, names):
    with torch.no_grad():
        out = model(x.clone())
    return {name: out.clone() for name in names}


def capture_batches(model, batches, names):
    return [capture_activations(model, x, names) for x in batches]
