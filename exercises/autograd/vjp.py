"""What backward() computes: vector-Jacobian products, and the Jacobian built from them.

For a function ``y = f(x)`` with a tensor output, ``y.backward(v)`` does not compute
"the gradient": it computes ``v^T J``, the vector-Jacobian product of the Jacobian
``J = dy/dx`` with a vector ``v`` shaped like ``y``. A scalar loss is the special
case ``v = 1``. With one such product per output element, ``v`` a unit vector each
time, the rows of the whole Jacobian come out one by one.
"""

from __future__ import annotations

import torch
from torch import nn


def vjp(f: nn.Module, x: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(f(x), v^T J)``, like ``torch.autograd.functional.vjp(f, x, v)``.

    Shapes:
        ``f`` is a module (here an ``nn.Sequential`` of ``Linear`` layers and
        activations), ``x`` any input it takes, ``v`` the shape of ``f(x)``. The
        answer: ``f(x)``, and a tensor of ``x``'s shape, dtype and device whose
        entry ``j`` is ``sum_i v[i] * d f(x)[i] / d x[j]`` (indices over all the
        dims). Both returned tensors are plain values: detached, no graph.

    Spec:
        - Take a fresh leaf ``x.detach().requires_grad_()``, run ``f`` on it once,
          and get the product from one backward pass: ``torch.autograd.grad(out,
          leaf, v)`` (or ``out.backward(v, inputs=[leaf])``).
        - Raise ``ValueError`` when ``v.shape`` is not ``f(x).shape``.
        - Leave everything you were given as it was: ``x`` (its values and its
          ``requires_grad``), and ``f``: its parameters AND their ``.grad``.

    Example (f(x) = W x with W = [[1, 2], [3, 4]], so J = W):
        >>> f = nn.Linear(2, 2, bias=False)
        >>> with torch.no_grad():
        ...     _ = f.weight.copy_(torch.tensor([[1., 2.], [3., 4.]]))
        >>> vjp(f, torch.tensor([1., 1.]), torch.tensor([1., 0.]))
        (tensor([3., 7.]), tensor([1., 2.]))          # v^T W: the first row of W

    Pitfalls the notes warn about:
        - ``out.backward()`` on a non-scalar raises "grad can be implicitly created
          only for scalar outputs": it needs ``v``. ``out.sum().backward()`` is the
          product with a vector of ones, not with ``v``.
        - ``x.requires_grad_()`` on the caller's tensor changes their tensor; and
          ``x.data`` is invisible to autograd: computing with it gives no gradient.

    Pitfall:
        - ``out.backward(v)`` alone also fills ``.grad`` of every parameter of
          ``f``: the caller's model now holds gradients it never asked for (and
          the next optimizer step uses them). Ask only for ``x``'s gradient.

    Forbidden: ``torch.autograd.functional`` (``vjp``, ``jacobian`` and the rest) and
    the derivative transforms of ``torch.func`` (``vjp``, ``grad``, ``jacrev``, ``jacfwd``,
    ``jvp``...), and batched products (``is_grads_batched=True``, which runs on ``vmap``):
    use ``torch.autograd.grad`` or ``backward``.
    """
    raise NotImplementedError


def jacobian(f: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Return the Jacobian of ``f`` at ``x``, like ``torch.autograd.functional.jacobian(f, x)``.

    Shapes: the answer is ``(*f(x).shape, *x.shape)``, in the dtype and on the device
    of ``f(x)``: entry ``[i..., j...]`` is ``d f(x)[i...] / d x[j...]``. For ``x`` of
    shape ``(2, 3)`` and ``f(x)`` of shape ``(2, 4)``, a ``(2, 4, 2, 3)`` tensor. An output
    with no elements (an empty batch) has no rows to compute: the answer is then an empty
    tensor of that shape, still in the dtype of ``f(x)``.

    Spec:
        - Run ``f`` once on a fresh leaf; then, for every element ``i`` of the output,
          one vector-Jacobian product with the unit vector ``e_i`` (a tensor of the
          output's shape, 1 at ``i``, 0 elsewhere) gives row ``i``; keep the graph
          between them (``retain_graph=True``).
        - Return a plain tensor (no graph); leave ``x`` and ``f`` (parameters and
          their ``.grad``) as they were.

    Example (the same f = W x):
        >>> jacobian(f, torch.tensor([1., 1.]))
        tensor([[1., 2.],
                [3., 4.]])

    Pitfall the notes warn about: ``.grad`` ACCUMULATES. Reading row after row
    from ``leaf.grad`` after repeated ``backward`` calls gives running sums of the
    rows unless the gradient is cleared in between; ``torch.autograd.grad``
    returns each product fresh instead.

    Forbidden: as for ``vjp``.
    """
    raise NotImplementedError
