"""Do-nothing per function: training checks the batch size, counts the batch and returns
zeros attached to x (the buffers' values untouched); evaluation returns x."""

import torch


def batch_norm_train(x, running_mean, running_var, num_batches_tracked, weight=None, bias=None,
                     momentum=0.1, eps=1e-5):
    if x.numel() // x.shape[1] < 2:
        raise ValueError("one value per channel")
    with torch.no_grad():
        num_batches_tracked.add_(1)
    return x * 0


def batch_norm_eval(x, running_mean, running_var, weight=None, bias=None, eps=1e-5):
    return x.clone()
