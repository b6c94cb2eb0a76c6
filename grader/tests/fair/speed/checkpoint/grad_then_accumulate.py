"""Right, written another way: the forward half copies the inputs (detach().clone()) instead
of keeping views; the backward half forks the random state with torch.random.fork_rng,
takes torch.autograd.grad with respect to the inputs and the parameters together and adds
the parameters' share to .grad by hand; the Function keeps the saved dict on ctx under
another name."""

import torch
from torch import nn


def checkpoint_forward(fn, *inputs):
    saved = {"rng_state": torch.get_rng_state().clone(), "inputs": [x.detach().clone() for x in inputs]}
    if any(x.is_cuda for x in inputs):
        saved["cuda_rng_state"] = torch.cuda.get_rng_state(next(x.device for x in inputs if x.is_cuda))
    with torch.no_grad():
        out = fn(*inputs)
    return out, saved


def checkpoint_backward(fn, saved, grad_output):
    xs = [x.detach().requires_grad_(x.is_floating_point()) for x in saved["inputs"]]
    cuda = [x.device for x in xs if x.is_cuda][:1]
    with torch.random.fork_rng(devices=cuda):
        torch.set_rng_state(saved["rng_state"])
        if cuda:
            torch.cuda.set_rng_state(saved["cuda_rng_state"], cuda[0])
        with torch.enable_grad():
            out = fn(*xs)
    params = [p for p in fn.parameters() if p.requires_grad]
    leaves = [x for x in xs if x.requires_grad] + params
    grads = list(torch.autograd.grad(out, leaves, grad_output, allow_unused=True))
    n = sum(x.requires_grad for x in xs)
    for p, g in zip(params, grads[n:]):
        if g is not None:
            p.grad = g if p.grad is None else p.grad + g
    it = iter(grads[:n])
    return [next(it) if x.requires_grad else None for x in xs]


class _Recompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn: nn.Module, *inputs):
        out, ctx.keep = checkpoint_forward(fn, *inputs)
        ctx.segment = fn
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, *checkpoint_backward(ctx.segment, ctx.keep, grad_output)


def checkpoint(fn, *inputs):
    return _Recompute.apply(fn, *inputs)
