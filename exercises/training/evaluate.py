"""Evaluating a model: eval mode, no graph, and the model handed back as it came.

Evaluation runs a model over a validation set, batch by batch, for its predictions
and its mean loss. Two switches make a forward an evaluation, and they are
independent of each other:

- ``model.eval()`` changes what some layers compute. ``Dropout`` lets every value
  through; ``BatchNorm`` normalises with its running statistics instead of the
  batch's, and stops updating them. It sets ``training = False`` on the model and
  on every submodule (``model.train()`` sets them all back to True).
- ``torch.no_grad()`` changes what autograd records: nothing. Without it every
  forward still builds a graph through the model parameters, memory and time
  spent for a backward that never comes.

Evaluation is also a guest in the middle of training (once an epoch): the model
must leave in the modes it came in.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

Batch = tuple[torch.Tensor, torch.Tensor]  # (inputs, targets)


def predict(model: nn.Module, batches: list[torch.Tensor]) -> torch.Tensor:
    """Run ``model`` over ``batches`` in evaluation mode; return the outputs concatenated.

    Spec:
        - ``batches`` is a list of input tensors, batch ``i`` of shape
          ``(n_i, ...)`` with ``n_i >= 1`` (the last batch is often shorter).
        - Run the model itself (not a ``copy.deepcopy`` of it, which costs the
          memory of a second model) once per batch, on that batch alone (no
          ``torch.cat`` of the inputs into one forward: batches exist because the
          whole set does not fit in memory at once), in evaluation mode (every
          module's ``training`` False) and under ``torch.no_grad()`` (or
          ``torch.inference_mode()``).
        - Return the outputs concatenated along dim 0, ``(N, ...)`` with
          ``N = sum of n_i``: what ``model.eval()`` gives batch by batch, with no
          graph behind them (``requires_grad`` False, no ``grad_fn``).
        - Afterwards every module (``model.modules()``: the model and each
          submodule) is back in the mode it came in, also when a batch raises (the
          exception goes on to the caller). The model may come partly in eval
          mode (a frozen BatchNorm kept in eval while the rest trains) or wholly
          in it: save each module's ``training`` flag before, put each back in a
          ``finally:``.
        - Change nothing else: the model parameters, BatchNorm's running
          statistics, the batches, and torch's global grad mode stay as they are.
        - Raise ``ValueError`` if ``batches`` is empty.

    Example (running mean 1 and variance 4: BatchNorm computes ``(x - 1) / 2``):
        >>> model = nn.Sequential(nn.BatchNorm1d(1), nn.Dropout(0.5))
        >>> with torch.no_grad():
        ...     _ = model[0].running_mean.fill_(1.0); _ = model[0].running_var.fill_(4.0)
        >>> predict(model, [torch.tensor([[1.], [3.]]), torch.tensor([[5.]])])
        tensor([[0.0000],
                [1.0000],
                [2.0000]])
        >>> model.training, model[0].training
        (True, True)

        In training mode the same call would normalise each batch with its own
        statistics (and fail on the batch of one), zero half the values at
        random, and move the running statistics.

    Pitfalls the notes warn about:
        - ``model.eval()`` is not ``torch.no_grad()``: eval mode alone still
          builds a graph behind every output; ``no_grad`` alone still drops out
          values at random and normalises with the batch's statistics. Evaluation
          needs both.

    Pitfalls:
        - ``model.train()`` afterwards is not "the mode it came in": it puts a
          frozen BatchNorm back in training mode, and a model that came in eval
          mode too. Neither is ``model.train(was_training)``: one flag for the
          whole model forgets the submodules' own.
        - A batch that raises skips whatever comes after it in the function:
          restore the modes in a ``finally:``.
        - ``torch.set_grad_enabled(False)`` without switching it back leaves
          autograd off for the training that follows: use ``with torch.no_grad():``.
    """
    raise NotImplementedError


def evaluate(model: nn.Module, batches: list[Batch], loss_name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``predict`` with targets: return ``(mean loss over every sample, outputs)``.

    Spec:
        - ``batches`` is a list of ``(inputs, targets)`` pairs, batch ``i``
          holding ``n_i >= 1`` samples along dim 0 (the last batch is often
          shorter).
        - ``loss_name`` names a loss of ``torch.nn.functional``: ``"mse_loss"``,
          ``"l1_loss"`` or ``"cross_entropy"``, with its default
          ``reduction="mean"``; ``getattr(F, loss_name)`` finds it. Targets are
          floats of the outputs' shape for the first two and int64 class indices
          of shape ``(n_i,)`` for ``cross_entropy``.
        - Run the model as ``predict`` does: once per batch, in eval mode, under
          ``torch.no_grad()``, every module's mode back afterwards (also when a
          batch raises), nothing else changed.
        - ``outputs``: every batch's outputs concatenated along dim 0, as
          ``predict`` returns them.
        - ``loss``: a 0-d tensor of the outputs' dtype, the loss of the whole set,
          ``getattr(F, loss_name)(outputs, targets)`` with ``targets`` every
          batch's concatenated: the mean over all ``N = sum of n_i`` samples. Batch
          by batch, weigh batch ``i``'s mean loss by ``n_i / N`` (or sum with
          ``reduction="sum"`` and divide by what the mean divides by). No graph
          behind it either.
        - Raise ``ValueError`` if ``batches`` is empty.

    Example (the model above; squared errors 0, 1 and 4):
        >>> batches = [(torch.tensor([[1.], [3.]]), torch.tensor([[0.], [0.]])),
        ...            (torch.tensor([[5.]]), torch.tensor([[0.]]))]
        >>> loss, outputs = evaluate(model, batches, "mse_loss")
        >>> loss
        tensor(1.6667)

        The mean of all three squared errors, 5 / 3. The mean of the two batch
        means, (0.5 + 4) / 2 = 2.25, would weigh the one sample of the short last
        batch as much as the two of the first.

    Pitfall: averaging the per-batch losses, right only when every batch has the
    same size. ``loss.item()`` summed over batches is fine for the arithmetic, but
    return a 0-d tensor of the outputs' dtype (``torch.tensor(total, dtype=...)``).
    """
    raise NotImplementedError
