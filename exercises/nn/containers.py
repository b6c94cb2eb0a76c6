"""Containers: a stack of layers that are really distinct, parameters counted once, freezing by name.

``nn.Sequential`` and ``nn.ModuleList`` register the modules they hold, so their parameters
reach ``parameters()``, ``.to()`` and ``state_dict()``. They hold modules, not copies: put the
same layer in twice and the model has one layer used twice, one set of weights that every slot
reads and every optimizer step moves at once. That is what weight tying wants, and what a
stack of "n layers" must not have.
"""

from __future__ import annotations

from torch import nn


def stack_layers(layer: nn.Module, n: int) -> nn.Sequential:
    """Return an ``nn.Sequential`` of ``n`` independent copies of ``layer``.

    Spec:
        - Each of the ``n`` slots (named ``"0"`` ... ``"n-1"``) holds a deep copy of
          ``layer``: the same class, settings, parameter and buffer values,
          ``requires_grad`` flags and training mode.
        - No two slots share a parameter or buffer, and none shares one with
          ``layer`` (``layer`` itself is not one of the slots), so training one slot
          never moves another, nor the caller's layer.
        - Ties inside ``layer`` are kept inside each copy: a layer that uses one
          ``nn.Linear`` twice gives copies that each use their own one twice
          (``copy.deepcopy`` does this).
        - ``n = 0`` gives an empty ``nn.Sequential``; a negative ``n`` raises
          ``ValueError``. Leave ``layer`` as it was.

    Example:
        >>> stack = stack_layers(nn.Linear(2, 2), 3)
        >>> len(stack), stack[0].weight is stack[1].weight
        (3, False)
        >>> count_parameters(stack)  # 3 * (4 + 2)
        18

    A mistake the notes' own code makes:
        - ``nn.ModuleList([layer for _ in range(n)])`` and ``nn.Sequential(*[layer
          for _ in range(n)])`` (file 000, section 9) put the same ``layer`` object
          in every slot: n slots, one set of weights.

    Pitfalls:
        - ``[copy.deepcopy(layer)] * n`` does it too (one copy, n times), and
          ``copy.copy`` shares the copy's parameters with ``layer``.

    Forbidden: ``torch.nn.modules.transformer._get_clones``, which makes the copies for
    you.
    """
    raise NotImplementedError


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Return the number of parameter elements of ``model``, each parameter counted once.

    Spec:
        - Sum ``p.numel()`` over the model's parameters and its submodules'.
        - A parameter reached through several names (a module used in two places, a
          weight tied between two layers, the notes' ``ModuleList([layer] * n)``) is
          counted once: it is one tensor, trained once.
        - With ``trainable_only=True``, only parameters with ``requires_grad`` count.
        - Buffers (BatchNorm's running statistics) are not parameters and do not
          count; an entry that holds ``None`` (``bias=False``) counts nothing.
        - Return a Python ``int``. Leave ``model`` as it was.

    Example:
        >>> lin = nn.Linear(2, 2)
        >>> count_parameters(nn.Sequential(lin, nn.ReLU(), lin))  # one Linear, used twice
        6
        >>> _ = lin.bias.requires_grad_(False)
        >>> count_parameters(nn.Sequential(lin, nn.BatchNorm1d(2)), trainable_only=True)  # 4 + 2 + 2
        8

    Pitfalls:
        - ``sum(t.numel() for t in model.state_dict().values())`` counts the
          buffers, and a shared weight once per name.

    Forbidden: ``parameters``, ``named_parameters`` (and ``_named_members`` behind them),
    which de-duplicate for you: walk ``model.named_modules(remove_duplicate=False)`` and
    each module's ``_parameters``, and remember the ids of the parameters you counted.
    """
    raise NotImplementedError


def freeze(model: nn.Module, prefixes: list[str]) -> None:
    """Set ``requires_grad = False`` on every parameter named by one of ``prefixes``.

    Spec:
        - A prefix names a module or a parameter by its qualified name, as
          ``named_modules()`` and ``named_parameters()`` write it (``"encoder"``,
          ``"encoder.0"``, ``"head.weight"``). A parameter is frozen when one of its
          names equals a prefix or starts with the prefix and a dot: ``"layer1"``
          freezes ``"layer1.weight"``, never ``"layer10.weight"``.
        - A parameter reached through several names (a shared module, a tied weight) is
          frozen when any of its names is under a prefix.
        - Every other parameter keeps its ``requires_grad`` (one frozen before stays
          frozen). Change nothing else: the same ``Parameter`` objects stay in place
          (an optimizer holding them must still hold the model's), with their values,
          and every module keeps its training mode. A prefix that names nothing
          freezes nothing. Return ``None``.

    Example:
        >>> model = nn.ModuleDict({"layer1": nn.Linear(2, 2), "layer10": nn.Linear(2, 2)})
        >>> freeze(model, ["layer1"])
        >>> model.layer1.weight.requires_grad, model.layer10.weight.requires_grad
        (False, True)

    Pitfalls the notes warn about:
        - Freezing is not ``model.eval()``: eval mode changes what Dropout and
          BatchNorm compute, and gradients are still computed (file 002).

    Pitfalls:
        - ``name.startswith(prefix)`` freezes ``layer10`` with ``layer1``, and
          ``prefix in name`` anything that mentions it.
        - ``p.requires_grad = name.startswith(...)``-style code sets every flag, and
          unfreezes what was frozen before.

    Forbidden: ``named_parameters``, ``parameters`` and ``requires_grad_`` (which walks
    ``parameters()``): set ``p.requires_grad`` on each parameter you find.
    """
    raise NotImplementedError
