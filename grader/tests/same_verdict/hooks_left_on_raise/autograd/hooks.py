"""Hooks removed once the forward has returned, with no ``finally``: a forward that raises
leaves every one of them on the model."""

import torch


def capture_activations(model, x, names):
    captured = {}
    modules = dict(model.named_modules())

    def keep(name):
        return lambda module, inputs, output: captured.__setitem__(name, output.detach().clone())

    handles = [modules[name].register_forward_hook(keep(name)) for name in names]
    with torch.no_grad():
        model(x)  # when this raises, the handles below are never removed
    for handle in handles:
        handle.remove()
    return {name: captured[name] for name in names}


def capture_batches(model, batches, names):
    return [capture_activations(model, x, names) for x in batches]
