"""Forward hooks: reading a network's intermediate activations without changing it.

``module.register_forward_hook(hook)`` makes the module call
``hook(module, inputs, output)`` after every forward it runs, and returns a handle
whose ``.remove()`` takes the hook off again. That is how feature extractors,
activation statistics and visualisations look inside a model they did not write:
no change to its ``forward``, and nothing left behind afterwards.
"""

from __future__ import annotations

import torch
from torch import nn


def capture_activations(model: nn.Module, x: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Run ``model(x)`` once and return the output of each named submodule.

    Arguments:
        ``names`` are qualified submodule names, as ``model.named_modules()`` gives
        them: ``"0"``, ``"2"``, ``"3.1"`` (the second child of the fourth child),
        and ``""`` for the model itself. ``model.get_submodule(name)`` finds each.

    Spec:
        - Register a forward hook on every named submodule, run ``model(x)`` ONCE,
          then remove every hook you registered (keep the handles; remove them in a
          ``finally:`` so an error cannot leave them behind either).
        - Return a dict ``{name: output}`` with exactly the given names, in their
          order, each value the output tensor of that submodule in this forward, as
          a detached copy (``output.detach().clone()``): no graph, and memory of its
          own.
        - Leave ``model`` as it was (no hooks left, same training mode, same
          parameters and ``.grad``) and ``x`` too. Running the forward under
          ``torch.no_grad()`` is a good idea: nothing here needs a graph.

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(inplace=True), nn.Linear(2, 1))
        >>> with torch.no_grad():
        ...     _ = model[0].weight.copy_(torch.eye(2)); _ = model[0].bias.zero_()
        >>> acts = capture_activations(model, torch.tensor([[1., -1.]]), ["0", "1"])
        >>> acts["0"], acts["1"]
        (tensor([[ 1., -1.]]), tensor([[1., 0.]]))

        Without ``.clone()``, ``acts["0"]`` would read ``[[1., 0.]]``: the in-place
        ReLU writes its result into the very tensor the Linear returned.

    Pitfalls:
        - ``ReLU(inplace=True)`` (and every ``inplace=True`` layer) overwrites its
          input, which is the previous layer's output: a hook that keeps a reference
          to that output sees it change after the hook has run. Keep a copy. (The
          notes recommend ``model.apply(inplace_relu)`` to save memory: it sets
          exactly this trap.)
        - A hook that is never removed keeps firing on every later forward, keeps
          writing into whatever it captured, and keeps what it holds alive: remove
          each handle once the forward is done.
        - ``register_forward_pre_hook`` sees a module's inputs, not its output.
    """
    raise NotImplementedError


def capture_batches(model: nn.Module, batches: list[torch.Tensor],
                    names: list[str]) -> list[dict[str, torch.Tensor]]:
    """``capture_activations`` for each batch in turn: one dict per batch, in order.

    Each dict holds the activations of its own batch: hooks left over from an earlier
    batch would keep writing the later batches' activations into the earlier dicts.

    Example (the model above):
        >>> out = capture_batches(model, [torch.tensor([[1., -1.]]), torch.tensor([[2., 3.]])], ["1"])
        >>> [d["1"] for d in out]
        [tensor([[1., 0.]]), tensor([[2., 3.]])]
    """
    raise NotImplementedError
