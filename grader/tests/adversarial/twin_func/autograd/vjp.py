"""Attack: derivatives by torch.func's transforms that the drill's spec does not name:
``torch.func.grad`` of ``(f(x) * v).sum()`` for the product, and ``torch.func.vmap`` of
that over the unit vectors for the Jacobian (what ``jacrev`` is built from).
"""

import torch
from torch.func import grad, vmap


def vjp(f, x, v):
    out = f(x.detach())
    if v.shape != out.shape:
        raise ValueError(f"v has shape {list(v.shape)}, f(x) has shape {list(out.shape)}")
    product = grad(lambda leaf: (f(leaf) * v).sum())(x.detach())
    return out.detach(), product.detach()


def jacobian(f, x):
    out = f(x.detach())
    units = torch.eye(out.numel(), dtype=out.dtype).reshape(out.numel(), *out.shape)
    rows = vmap(lambda u: grad(lambda leaf: (f(leaf) * u).sum())(x.detach()))(units)
    return rows.reshape(*out.shape, *x.shape).detach()
