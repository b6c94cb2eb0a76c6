"""Do-nothing: zero gradients, a zero scale, no step."""

import torch


def unscale_grads(grads, scale):
    return [None if g is None else torch.zeros_like(g) for g in grads], False


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    return 0.0, 0


def scaled_step(model, optimizer, inputs, targets, scale, growth_tracker, max_norm=None,
                growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    return 0.0, 0, False
