"""Do-nothing: hands the inputs back (the first input as the output, grad_output as every
gradient)."""

import torch


def checkpoint_forward(fn, *inputs):
    return inputs[0].detach().clone(), {"inputs": [x.detach() for x in inputs],
                                        "rng_state": torch.get_rng_state()}


def checkpoint_backward(fn, saved, grad_output):
    return [grad_output.clone() for _ in saved["inputs"]]


def checkpoint(fn, *inputs):
    return inputs[0]
