"""Mix: the boolean and counting parts right around do-nothing values: found_inf computed
but the gradients left scaled; the tracker counted but the scale never changed; a plain
optimizer step on the unscaled loss, reported as taken."""

import torch
import torch.nn.functional as F


def unscale_grads(grads, scale):
    return ([None if g is None else g.clone() for g in grads],
            any(not bool(torch.isfinite(g).all()) for g in grads if g is not None))


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    if found_inf:
        return float(scale), 0
    return float(scale), (growth_tracker + 1) % growth_interval


def scaled_step(model, optimizer, inputs, targets, scale, growth_tracker, max_norm=None,
                growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    optimizer.zero_grad()
    F.mse_loss(model(inputs), targets).backward()
    optimizer.step()
    return float(scale), (growth_tracker + 1) % growth_interval, True
