"""Right, written another way: found_inf from torch.isinf and torch.isnan element by element
over one flat float32 copy of every gradient; scaled_step clears the gradients in place
(p.grad.zero_(), as zero_grad(set_to_none=False) does) and unscales with mul_."""

import math

import torch
import torch.nn.functional as F


def unscale_grads(grads, scale):
    present = [g for g in grads if g is not None]
    flat = torch.cat([g.reshape(-1).float() for g in present]) if present else torch.zeros(0)
    found_inf = bool((torch.isinf(flat) | torch.isnan(flat)).any())
    return [None if g is None else g * (1.0 / scale) for g in grads], found_inf


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    as_float32 = torch.tensor(scale, dtype=torch.float32)
    if found_inf:
        return float(as_float32 * backoff_factor), 0
    if growth_tracker + 1 == growth_interval:
        grown = float(as_float32 * growth_factor)
        return (grown if math.isfinite(grown) else float(as_float32)), 0
    return float(as_float32), growth_tracker + 1


def scaled_step(model, optimizer, inputs, targets, scale, growth_tracker, max_norm=None,
                growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.detach_()
            p.grad.zero_()
    (F.mse_loss(model(inputs), targets) * scale).backward()
    grads = [p.grad for p in model.parameters()]
    _, found_inf = unscale_grads(grads, scale)
    with torch.no_grad():
        for g in grads:
            if g is not None:
                g.mul_(1.0 / scale)
    if not found_inf:
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
    new_scale, new_tracker = update_scale(scale, growth_tracker, found_inf, growth_factor,
                                          backoff_factor, growth_interval)
    return new_scale, new_tracker, not found_inf
