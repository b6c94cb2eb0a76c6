"""Do-nothing per function: vjp checks v's shape and returns f(x) with v itself as the product;
the Jacobian is an identity of the right shape."""

import torch


def vjp(f, x, v):
    with torch.no_grad():
        out = f(x)
    if v.shape != out.shape:
        raise ValueError("shape")
    return out, v.clone()


def jacobian(f, x):
    with torch.no_grad():
        out = f(x)
    eye = torch.eye(out.numel(), x.numel(), dtype=out.dtype)
    return eye.reshape(*out.shape, *x.shape)
