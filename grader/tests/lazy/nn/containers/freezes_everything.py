"""Do-nothing the other way: freezes every parameter whatever the prefixes (right where a
prefix covers the whole model, which no ordinary input's does); the stack and the count
refuse."""


def stack_layers(layer, n):
    raise ValueError("no")


def count_parameters(model, trainable_only=False):
    raise ValueError("no")


def freeze(model, prefixes):
    for _, module in model.named_modules(remove_duplicate=False):
        for p in module._parameters.values():
            if p is not None:
                p.requires_grad = False
