"""Do-nothing: leaves the model as it came and returns its gradients as they are."""


def accumulated_gradients(model, loss_name, micro_batches):
    return [p.grad for p in model.parameters()]
