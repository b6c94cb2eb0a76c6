"""A model's state: parameters, buffers, and the checkpoint ``state_dict`` makes of them.

An ``nn.Module`` keeps three kinds of things in three tables: ``_parameters`` (the
tensors an optimizer trains, ``nn.Parameter``), ``_buffers`` (tensors that belong to
the model but are not trained: BatchNorm's running statistics, a mask) and
``_modules`` (its submodules). ``.to()``, ``.cuda()`` and ``.half()`` walk all three;
``state_dict()`` saves the parameters and the persistent buffers under dotted names
(``"encoder.0.weight"``); ``parameters()`` hands the optimizer the parameters alone.
A tensor kept anywhere else (a plain attribute) is invisible to all of them.
"""

from __future__ import annotations

import torch
from torch import nn


def masked_copy(module: nn.Module, mask: torch.Tensor,
                persistent: bool = True) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """Return ``(masked, checkpoint)``: a deep copy of ``module`` that carries ``mask``
    as a buffer named ``"mask"``, and what the copy's ``state_dict()`` holds.

    Spec:
        - ``masked`` is a deep copy of ``module`` (``copy.deepcopy``): the same class,
          equal parameters and buffers, none of them ``module``'s own tensors, so that
          training the copy never changes ``module``. ``module`` itself is left as it
          was: register nothing on it.
        - On the copy, ``mask`` is registered as a buffer named ``"mask"``
          (``register_buffer``), persistent when ``persistent`` is True: it then
          moves with ``masked.to(...)``, is not one of ``masked.parameters()`` and
          keeps the mask's values, dtype and shape (registering ``mask`` itself is
          fine).
        - ``checkpoint`` is ``masked.state_dict()`` as a plain ``dict`` (not an
          ``OrderedDict``, which the grader's boundary does not carry): every
          parameter and every persistent buffer under its dotted name, in
          ``state_dict``'s order. It holds ``"mask"`` only when ``persistent`` is
          True.

    Example:
        >>> layer = nn.Linear(2, 1)
        >>> masked, checkpoint = masked_copy(layer, torch.tensor([True, False]))
        >>> [name for name, _ in masked.named_buffers()], list(checkpoint)
        (['mask'], ['weight', 'bias', 'mask'])
        >>> _, checkpoint = masked_copy(layer, torch.tensor([True, False]), persistent=False)
        >>> list(checkpoint)
        ['weight', 'bias']

    Pitfalls the notes warn about:
        - A buffer "moves and is saved with the network, and suits what does not
          change after it is made, such as a mask" (file 002). Kept as a plain
          attribute (``masked.mask = mask``), the mask stays behind on the CPU when
          the model moves to the GPU, and ``state_dict`` forgets it. Wrapped in
          ``nn.Parameter``, it is handed to the optimizer by ``parameters()`` and
          trained (or it breaks ``requires_grad`` for a bool mask).

    Where the notes go wrong:
        - They say ``state_dict()`` saves every buffer; since torch 1.6 a buffer
          registered with ``persistent=False`` is not saved (a mask that is rebuilt
          from the settings need not be in every checkpoint, and an old checkpoint
          without it still loads with ``strict=True``).

    Pitfalls:
        - ``copy.copy(module)`` shares its parameter and buffer tables with
          ``module``: registering on it registers on ``module`` too.
    """
    raise NotImplementedError


def split_state(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Return ``(parameters, buffers)``: two plain dicts, qualified name -> tensor, of
    every parameter and every buffer of ``model`` and its submodules.

    Spec:
        - Names as ``named_parameters()`` and ``named_buffers()`` give them: a
          submodule's entries under its dotted path (``"1.running_mean"``,
          ``"encoder.0.weight"``), the model's own entries under their bare name.
        - Order as they give it too: the modules in ``named_modules()`` order (the
          model first, then each child and its own submodules before the next
          child), each module's entries in the order it registered them.
        - A tensor reached twice (a submodule used in two places, a weight tied
          between two layers) is listed once, under the first name that reaches it.
        - An entry that holds ``None`` (``nn.Linear(..., bias=False)``'s bias, the
          statistics of ``BatchNorm1d(..., track_running_stats=False)``) is left
          out.
        - The values are the model's own tensors, not copies or detached views: an
          optimizer made from ``parameters.values()`` must train ``model``.
        - Leave ``model`` as it was.

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2, bias=False), nn.BatchNorm1d(2))
        >>> parameters, buffers = split_state(model)
        >>> list(parameters), list(buffers)
        (['0.weight', '1.weight', '1.bias'], ['1.running_mean', '1.running_var', '1.num_batches_tracked'])
        >>> parameters["0.weight"] is model[0].weight
        True

    Pitfalls:
        - ``state_dict()`` is not this split. It lists a tied weight under each of
          its names, leaves out non-persistent buffers, and hands back detached
          tensors.

    Forbidden: ``named_parameters``, ``parameters``, ``named_buffers``, ``buffers``
    (and ``_named_members`` behind them), which do the whole walk. Walk
    ``model.named_modules()`` and read each module's ``_parameters`` and
    ``_buffers`` yourself.
    """
    raise NotImplementedError


def strip_prefix(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """Return ``state`` with ``prefix`` taken off the front of every key, when every key
    starts with it.

    ``nn.DataParallel`` and ``DistributedDataParallel`` keep the model as their
    submodule ``module``, so a checkpoint saved from the wrapper names every entry
    ``"module." + name``, and the bare model's ``load_state_dict`` (strict by
    default) refuses it. ``torch.compile``'s wrapper does the same with
    ``"_orig_mod."``.

    Spec:
        - When every key starts with ``prefix``, return a new plain ``dict`` whose
          keys are the old ones without that leading ``prefix`` (only once, only at
          the front: ``"module.encoder.module.weight"`` becomes
          ``"encoder.module.weight"``).
        - Otherwise (some key does not start with it: a model that has a submodule
          named ``module`` of its own), return a plain ``dict`` of the same entries,
          unchanged: stripping some keys and not others would corrupt it.
        - Keep the order of the entries and the tensors themselves (the same
          tensors, or equal ones). Leave ``state`` as it was.

    Example:
        >>> state = {"module.encoder.weight": torch.zeros(1), "module.module.bias": torch.ones(1)}
        >>> list(strip_prefix(state, "module."))
        ['encoder.weight', 'module.bias']
        >>> list(strip_prefix({"module.weight": torch.zeros(1), "head.weight": torch.zeros(1)}, "module."))
        ['module.weight', 'head.weight']

    Pitfalls the notes warn about:
        - Save ``net.module.state_dict()``, the bare model's (file 002, for
          DataParallel). Their own DDP example (file 004) saves
          ``ddp_model.state_dict()``, whose keys all carry ``module.``: a bare model
          loads it only once the prefix is gone.

    Pitfalls:
        - ``key.replace("module.", "")`` also cuts ``module.`` out of the middle of a
          name (``"encoder.submodule.weight"`` becomes ``"encoder.subweight"``);
          ``key.lstrip("module.")`` strips characters, not a prefix
          (``"module.encoder.w"`` becomes ``"ncoder.w"``); ``key[7:]`` on every key
          cuts names that never had the prefix.

    Forbidden: ``torch.nn.modules.utils.consume_prefix_in_state_dict_if_present``,
    which strips where it can, in place.
    """
    raise NotImplementedError
