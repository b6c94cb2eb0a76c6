"""Right, written another way: the product with out.backward(v, inputs=[leaf]) read from the
fresh leaf's .grad (the spec's other route), and the Jacobian preallocated as a
(f(x).numel(), x.numel()) tensor in f(x)'s dtype and device, each row the gradient of one
output element (a vector-Jacobian product with e_i), reshaped at the end. An output with no
elements needs no special case: the preallocated tensor is already the empty answer.

The Jacobian's shape of code is the row-by-row loop of tad-mctc/tad-mctc,
src/tad_mctc/autograd/nonfunctorch.py (jac: torch.empty in a.dtype, one autograd.grad of
aflat[i] per row), here without its create_graph (the answer is a plain value) and with
the rows reshaped back to x's shape."""

import torch


def vjp(f, x, v):
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    if tuple(v.shape) != tuple(out.shape):
        raise ValueError("v must have the shape of f(x)")
    out.backward(v, inputs=[leaf])
    return out.detach(), leaf.grad


def jacobian(f, x):
    leaf = x.detach().requires_grad_()
    out = f(leaf)
    flat = out.reshape(-1)
    rows = torch.empty(flat.numel(), x.numel(), dtype=out.dtype, device=out.device)
    for i in range(flat.numel()):
        (grad,) = torch.autograd.grad(flat[i], leaf, retain_graph=True)
        rows[i] = grad.reshape(-1)
    return rows.reshape(*out.shape, *x.shape)
