"""Do-nothing, the best of each: the layer wrapped once whatever n is, the number of
parameter tensors instead of their elements, and a freeze that changes nothing."""

from torch import nn


def stack_layers(layer, n):
    return nn.Sequential(layer)


def count_parameters(model, trainable_only=False):
    return sum(1 for _, module in model.named_modules() for p in module._parameters.values() if p is not None)


def freeze(model, prefixes):
    return None
