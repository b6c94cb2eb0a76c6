"""Do-nothing: a zero output of the right shape, an empty saved dict, zero gradients."""

import torch


def checkpoint_forward(fn, *inputs):
    with torch.no_grad():
        shape = fn(*inputs).shape
    return torch.zeros(shape, dtype=torch.float64), {"inputs": [x.detach() for x in inputs],
                                                     "rng_state": torch.get_rng_state()}


def checkpoint_backward(fn, saved, grad_output):
    return [torch.zeros_like(x) if x.is_floating_point() else None for x in saved["inputs"]]


def checkpoint(fn, *inputs):
    with torch.no_grad():
        shape = fn(*inputs).shape
    return torch.zeros(shape, dtype=torch.float64, requires_grad=True)
