"""Do-nothing: checks for an empty list (ValueError), runs the model forward once per
micro-batch (the protocol the spec asks for) without any backward, and leaves zero gradients
(None for frozen parameters)."""

import torch


def accumulated_gradients(model, loss_name, micro_batches):
    if not micro_batches:
        raise ValueError("no micro-batch to accumulate")
    with torch.no_grad():
        for inputs, _ in micro_batches:
            model(inputs)
    for p in model.parameters():
        p.grad = torch.zeros_like(p) if p.requires_grad else None
    return [p.grad for p in model.parameters()]
