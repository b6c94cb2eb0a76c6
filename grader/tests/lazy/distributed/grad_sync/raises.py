"""Do-nothing: raises ValueError on every call."""

import torch
import torch.distributed


def average_gradients(model, world_size, all_reduce=torch.distributed.all_reduce):
    raise ValueError("no averaging here")
