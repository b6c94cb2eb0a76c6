"""Gradient accumulation: one big batch's gradients from several small ones.

When a batch does not fit in memory, run it as micro-batches: forward and
backward one micro-batch at a time, let ``backward()`` add into ``.grad``, and
step once at the end. Done right, the gradients equal those of one step on the
whole batch; done wrong, they are off by a factor (or by a weighting) that no
error message will ever point out.
"""

import torch
import torch.nn.functional as F
from torch import nn

MicroBatch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def accumulated_gradients(
    model: nn.Module, loss_name: str, micro_batches: list[MicroBatch],
) -> list[torch.Tensor | None]:
    """Accumulate the gradients of ``micro_batches`` so they equal one big batch's.

    Spec:
        - ``loss_name`` names a loss of ``torch.nn.functional``: ``"mse_loss"``,
          ``"l1_loss"`` or ``"cross_entropy"``, always with its default
          ``reduction="mean"``; ``getattr(F, loss_name)`` finds it.
        - ``micro_batches``: a list of ``(inputs, targets)`` pairs; micro-batch
          ``i`` holds ``n_i >= 1`` samples along dim 0, and the sizes may differ
          (the last micro-batch is often smaller). Targets are floats of shape
          ``(n_i, out)`` for the regression losses and int64 class indices of
          shape ``(n_i,)`` for ``cross_entropy``.
        - Run the model forward and backward once per micro-batch, on that
          micro-batch alone, so that afterwards every parameter's ``.grad`` is
          the gradient of ``loss_fn(model(X), Y)``, where ``X`` and ``Y``
          concatenate all the micro-batches (one batch of ``N = sum of n_i``
          samples).
        - Discard whatever ``.grad`` the model holds on entry, on EVERY parameter,
          frozen ones included: afterwards each ``.grad`` is what one backward on the
          concatenated batch gives a model whose gradients are all None. So a trainable
          parameter holds the big batch's gradient, and a frozen one
          (``requires_grad=False``) holds ``None``, even if it arrived holding a stale
          gradient. ``model.zero_grad()`` (which sets every ``.grad`` to None) does
          exactly that; ``zero_grad(set_to_none=False)`` would leave zeros on a frozen
          parameter instead. No optimizer step: the parameters stay as they are.
        - Return ``[p.grad for p in model.parameters()]``.
        - Raise ``ValueError`` if ``micro_batches`` is empty.

    Why the scaling: the big batch's loss is a mean over all ``N`` samples and
    micro-batch ``i``'s loss a mean over its ``n_i``, so
    ``big_loss = sum over i of (n_i / N) * loss_i``. Gradients are linear and
    ``backward()`` adds into ``.grad``: back-propagate ``loss_i * n_i / N``
    for each micro-batch in turn.

    Example (one weight w = 1, predictions w * x, targets 0, mean squared error):
        >>> model = nn.Linear(1, 1, bias=False)
        >>> with torch.no_grad():
        ...     _ = model.weight.fill_(1.0)
        >>> batches = [(torch.tensor([[1.]]), torch.tensor([[0.]])),
        ...            (torch.tensor([[2.], [2.]]), torch.tensor([[0.], [0.]]))]
        >>> accumulated_gradients(model, "mse_loss", batches)
        [tensor([[6.]])]

        The micro-batch gradients are 2 and 8, weighted 1/3 and 2/3: 6, the
        gradient of the mean over all three samples. Forgetting the scaling
        gives 2 + 8 = 10; dividing by the number of micro-batches gives 5.

    Pitfalls the notes warn about:
        - ``backward()`` *adds* into ``.grad``: that is what makes accumulation
          work, and why old gradients must be cleared first: once, before the
          loop. Clearing inside the loop keeps only the last micro-batch.
        - Batch norm would make micro-batches differ from one big batch (each
          normalises with its own statistics); the models here have none.

    A mistake the notes' own code makes:
        - Scale by ``n_i / N``, not ``1 / k``: dividing by the number of
          micro-batches is right only when they all have the same size. The
          notes' ``MinibatchAccumulation`` does not scale at all: it runs backward
          on each micro-batch's loss as it is, so ``k`` micro-batches of mean
          losses give ``k`` times the gradient of the batch's mean loss.

    Pitfall:
        - Do not ``torch.cat`` the micro-batches into one forward: the numbers
          match, but the memory saving is the whole point (the grader counts
          the forward calls and their batch sizes).
    """
    raise NotImplementedError
