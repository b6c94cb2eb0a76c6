"""Do-nothing: zeros of x's shape from both functions; the buffers untouched."""

import torch


def batch_norm_train(x, running_mean, running_var, num_batches_tracked, weight=None, bias=None,
                     momentum=0.1, eps=1e-5):
    return torch.zeros_like(x)


def batch_norm_eval(x, running_mean, running_var, weight=None, bias=None, eps=1e-5):
    return torch.zeros_like(x)
