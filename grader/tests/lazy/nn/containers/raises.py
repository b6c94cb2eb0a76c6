"""Do-nothing: raises ValueError on every call."""


def stack_layers(layer, n):
    raise ValueError("no")


def count_parameters(model, trainable_only=False):
    raise ValueError("no")


def freeze(model, prefixes):
    raise ValueError("no")
