"""Dynamic loss scaling, the heart of mixed-precision training.

In float16 small gradients underflow to zero. The cure is to multiply the loss
by a large ``scale`` before ``backward()``, so every gradient is ``scale`` times
larger, and to divide the gradients by ``scale`` again ("unscale") before the
optimizer uses them. No single scale fits a whole run: too small and gradients
still underflow, too large and they overflow to ``inf``. So the scale is
dynamic: a step whose gradients hold an ``inf`` or ``nan`` is SKIPPED (the
optimizer does not step at all) and the scale is multiplied by
``backoff_factor``; after ``growth_interval`` clean steps in a row it is
multiplied by ``growth_factor``, to probe whether a larger one now fits.

This is what ``torch.amp.GradScaler`` does. Rebuild it from its state: the
``scale`` (a float32 number) and the ``growth_tracker`` (how many clean steps in
a row since the scale last changed), passed in and handed back.

Forbidden: ``torch.amp.GradScaler`` (also as ``torch.cuda.amp.GradScaler`` and
``torch.cpu.amp.GradScaler``), ``torch._amp_update_scale_`` and
``torch._amp_foreach_non_finite_check_and_unscale_``.
"""

import torch
from torch import nn


def unscale_grads(grads: list[torch.Tensor | None], scale: float
                  ) -> tuple[list[torch.Tensor | None], bool]:
    """Unscale gradients and say whether any of them is not finite.

    Spec:
        - Return ``(unscaled, found_inf)``: ``unscaled`` holds, for each entry of
          ``grads``, a new tensor ``grad * (1 / scale)`` of the same shape, dtype
          and device (``None`` stays ``None``: a frozen parameter); ``found_inf``
          is a Python ``bool``, True when any element of any gradient is
          ``inf``, ``-inf`` or ``nan``. Look at the elements themselves: finite
          elements near the dtype's largest value can add up to ``inf``, and
          they are still finite.
        - ``grads`` are left unchanged.

    Example:
        >>> unscale_grads([torch.tensor([8., 16.]), None], 8.0)
        ([tensor([1., 2.]), None], False)
        >>> unscale_grads([torch.tensor([8., float("inf")])], 8.0)[1]
        True
    """
    raise NotImplementedError


def update_scale(scale: float, growth_tracker: int, found_inf: bool, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000) -> tuple[float, int]:
    """The scale and growth tracker after one step, as ``GradScaler.update()`` leaves them.

    Spec:
        - If ``found_inf``: the scale is multiplied by ``backoff_factor`` and the
          tracker goes back to 0.
        - Otherwise the step was a clean one: the tracker counts it. When that
          makes ``growth_interval`` clean steps in a row, the scale is multiplied
          by ``growth_factor`` and the tracker goes back to 0; otherwise the
          scale stays and the tracker keeps the new count.
        - The scale is a float32 number: a growth that would overflow float32
          (to ``inf``) is not made, though the tracker still goes back to 0.
        - Return ``(new_scale, new_tracker)`` as a Python ``float`` and ``int``.

    Example (the defaults: growth 2, backoff 0.5, interval 2000):
        >>> update_scale(65536.0, 5, False)
        (65536.0, 6)
        >>> update_scale(65536.0, 1999, False)     # the 2000th clean step in a row
        (131072.0, 0)
        >>> update_scale(65536.0, 1999, True)
        (32768.0, 0)
    """
    raise NotImplementedError


def scaled_step(model: nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor,
                targets: torch.Tensor, scale: float, growth_tracker: int,
                max_norm: float | None = None, growth_factor: float = 2.0,
                backoff_factor: float = 0.5, growth_interval: int = 2000
                ) -> tuple[float, int, bool]:
    """One training step with dynamic loss scaling, as with a ``GradScaler``.

    Spec, in this order:
        1. Clear the gradients (``optimizer.zero_grad()``): whatever the last
           step left in ``.grad`` (its gradients, or a skipped step's ``inf``)
           must not count. Then compute
           ``loss = F.mse_loss(model(inputs), targets)`` and back-propagate
           ``loss * scale``.
        2. Unscale every parameter's ``.grad`` in place (as ``unscale_grads``
           computes it: ``GradScaler.unscale_``) and find out whether any is not
           finite.
        3. If all are finite: when ``max_norm`` is given, clip the UNSCALED
           gradients to that total norm (``torch.nn.utils.clip_grad_norm_``),
           then ``optimizer.step()``. If any is not finite: skip the step
           entirely (the parameters and the optimizer's state stay as they were).
        4. Update the scale and the tracker (``update_scale``).
        - Return ``(new_scale, new_tracker, stepped)``, ``stepped`` a Python
          ``bool`` (False when the step was skipped). The model's parameters and
          their ``.grad`` and the optimizer's state are changed as a
          ``GradScaler`` loop changes them; ``inputs`` and ``targets`` are not.

    Example (the training loop this replaces)::

        scaler = torch.amp.GradScaler(init_scale=scale, ...)
        optimizer.zero_grad()
        scaler.scale(F.mse_loss(model(inputs), targets)).backward()
        scaler.unscale_(optimizer)
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)     # skipped if a gradient is inf or nan
        scaler.update()

    Pitfalls:
        - Stepping on ``inf``: an optimizer step with an ``inf`` or ``nan``
          gradient writes ``nan`` into the weights for good.
        - Clipping before unscaling: the scaled gradients' norm is ``scale``
          times too large, so ``max_norm`` clips them far too hard.
        - Counting the growth interval: the scale grows on the
          ``growth_interval``-th clean step in a row, and a skipped step starts
          the count again.
    """
    raise NotImplementedError
