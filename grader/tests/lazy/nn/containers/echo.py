"""Do-nothing: hands the arguments back (the layer itself, the model, the model)."""


def stack_layers(layer, n):
    return layer


def count_parameters(model, trainable_only=False):
    return model


def freeze(model, prefixes):
    return model
