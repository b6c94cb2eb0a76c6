"""Do-nothing: leaves every gradient as it came (no collective) and returns them (right only
for one rank)."""

import torch
import torch.distributed


def average_gradients(model, world_size, all_reduce=torch.distributed.all_reduce):
    return [p.grad for p in model.parameters()]
