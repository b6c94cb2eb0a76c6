"""Right, written another way: the backward half puts the saved random state in place and
the caller's back by hand (torch.get_rng_state / torch.set_rng_state around the
recomputation) instead of torch.random.fork_rng; the Function joins the halves."""

import torch
from torch import nn


def checkpoint_forward(fn, *inputs):
    saved = {"inputs": [x.detach() for x in inputs], "rng_state": torch.get_rng_state()}
    cuda = [x.device for x in inputs if x.is_cuda]
    if cuda:
        saved["cuda_rng_state"] = torch.cuda.get_rng_state(cuda[0])
    with torch.no_grad():
        return fn(*inputs), saved


def checkpoint_backward(fn, saved, grad_output):
    xs = [x.detach().requires_grad_(x.is_floating_point()) for x in saved["inputs"]]
    cuda = [x.device for x in xs if x.is_cuda][:1]
    callers = torch.get_rng_state()
    callers_cuda = torch.cuda.get_rng_state(cuda[0]) if cuda else None
    torch.set_rng_state(saved["rng_state"])
    if cuda:
        torch.cuda.set_rng_state(saved["cuda_rng_state"], cuda[0])
    try:
        with torch.enable_grad():
            out = fn(*xs)
    finally:
        torch.set_rng_state(callers)
        if callers_cuda is not None:
            torch.cuda.set_rng_state(callers_cuda, cuda[0])
    out.backward(grad_output)
    return [x.grad if x.requires_grad else None for x in xs]


class Recomputed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn: nn.Module, *inputs):
        out, saved = checkpoint_forward(fn, *inputs)
        ctx.fn, ctx.saved = fn, saved
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, *checkpoint_backward(ctx.fn, ctx.saved, grad_output))


def checkpoint(fn, *inputs):
    return Recomputed.apply(fn, *inputs)
