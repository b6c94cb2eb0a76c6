"""Do-nothing: zeros of the right shapes (f(x) run, the product and the Jacobian zeros)."""

import torch


def vjp(f, x, v):
    with torch.no_grad():
        out = f(x)
    return out, torch.zeros_like(x)


def jacobian(f, x):
    with torch.no_grad():
        out = f(x)
    return torch.zeros(*out.shape, *x.shape, dtype=out.dtype)
