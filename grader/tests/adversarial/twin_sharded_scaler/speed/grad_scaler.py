"""Attack: the scale update by ``ShardedGradScaler._amp_update_scale_cpu_`` (FSDP's pure-Python
copy of ``torch._amp_update_scale_``), called unbound on a plain object with the attributes
it reads; ``unscale_grads`` is not attempted (``scaled_step`` unscales by hand).
"""

from __future__ import annotations

import math
import types

import torch
import torch.nn.functional as F
from torch import nn


def unscale_grads(grads: list[torch.Tensor | None], scale: float
                  ) -> tuple[list[torch.Tensor | None], bool]:
    raise NotImplementedError


def update_scale(scale: float, growth_tracker: int, found_inf: bool, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000) -> tuple[float, int]:
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    state = types.SimpleNamespace(
        _scale=torch.tensor(scale, dtype=torch.float32), _growth_tracker=torch.tensor(growth_tracker),
        _growth_factor=growth_factor, _backoff_factor=backoff_factor, _growth_interval=growth_interval)
    ShardedGradScaler._amp_update_scale_cpu_(state, torch.tensor(float(found_inf)))
    new_scale = float(state._scale)
    return (new_scale if math.isfinite(new_scale) else float(scale)), int(state._growth_tracker)


def scaled_step(model: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
                targets: torch.Tensor, scale: float, growth_tracker: int,
                max_norm: float | None = None, growth_factor: float = 2.0,
                backoff_factor: float = 0.5, growth_interval: int = 2000
                ) -> tuple[float, int, bool]:
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), targets)
    (loss * scale).backward()
    params = [p for p in model.parameters() if p.grad is not None]
    unscaled = [p.grad * (1.0 / scale) for p in params]
    found_inf = any(not bool(torch.isfinite(g).all()) for g in unscaled)
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
