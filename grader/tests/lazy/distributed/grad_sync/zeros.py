"""Do-nothing: every gradient becomes zeros of its shape (frozen parameters keep None), with no
collective; returns them."""

import torch
import torch.distributed


def average_gradients(model, world_size, all_reduce=torch.distributed.all_reduce):
    for p in model.parameters():
        if p.grad is not None:
            p.grad = torch.zeros_like(p)
    return [p.grad for p in model.parameters()]
