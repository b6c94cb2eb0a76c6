"""Mistake: the default growth_interval is one short (1999 instead of GradScaler's 2000), as
if the interval counted from the step that starts it: with the default, the scale grows on
the 1999th clean step in a row, one step before GradScaler's. Spelled-out intervals are right."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

CAUGHT_BY = ('test_update_scale_matches_grad_scaler', 'test_scaled_step_matches_a_grad_scaler_loop')


def unscale_grads(grads: list[torch.Tensor | None], scale: float
                  ) -> tuple[list[torch.Tensor | None], bool]:
    inv_scale = 1.0 / scale
    unscaled = [None if g is None else g * inv_scale for g in grads]
    found_inf = any(not bool(torch.isfinite(g).all()) for g in grads if g is not None)
    return unscaled, found_inf


def update_scale(scale: float, growth_tracker: int, found_inf: bool, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 1999) -> tuple[float, int]:
    if found_inf:
        return float(torch.tensor(scale * backoff_factor, dtype=torch.float32)), 0
    clean = growth_tracker + 1
    if clean < growth_interval:
        return float(scale), clean
    grown = float(torch.tensor(scale * growth_factor, dtype=torch.float32))  # float32, as GradScaler keeps it
    return (grown if math.isfinite(grown) else float(scale)), 0  # an overflow to inf is not made


def scaled_step(model: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
                targets: torch.Tensor, scale: float, growth_tracker: int,
                max_norm: float | None = None, growth_factor: float = 2.0,
                backoff_factor: float = 0.5, growth_interval: int = 1999
                ) -> tuple[float, int, bool]:
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), targets)
    (loss * scale).backward()
    params = [p for p in model.parameters() if p.grad is not None]
    unscaled, found_inf = unscale_grads([p.grad for p in params], scale)
    with torch.no_grad():
        for p, g in zip(params, unscaled):
            p.grad.copy_(g)
    if not found_inf:
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm)
        optimizer.step()
    new_scale, new_tracker = update_scale(scale, growth_tracker, found_inf, growth_factor,
                                          backoff_factor, growth_interval)
    return new_scale, new_tracker, not found_inf
