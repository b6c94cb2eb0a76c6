"""Do-nothing: raises on every call."""


def capture_activations(model, x, names):
    raise ValueError("no")


def capture_batches(model, batches, names):
    raise ValueError("no")
