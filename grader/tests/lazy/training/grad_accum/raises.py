"""Do-nothing: raises the spec's exception (ValueError) on every call."""


def accumulated_gradients(model, loss_name, micro_batches):
    raise ValueError("no micro-batch to accumulate")
