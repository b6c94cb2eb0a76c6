"""Activation checkpointing: trade compute for memory.

Autograd keeps every intermediate a backward pass will need, for the whole
forward pass: for a deep network that is most of the memory. Checkpointing a
segment ``fn`` keeps only its inputs: the forward pass runs ``fn`` without
recording a graph, and the backward pass runs ``fn`` a second time, now
recording, and back-propagates through that recomputation. Twice the forward
compute for the segment, a fraction of its memory.

``torch.utils.checkpoint.checkpoint`` does this. Here you build it in three
pieces: the forward half, the backward half (each a function of plain data, so
the grader can look at what you keep), and the ``torch.autograd.Function`` that
joins them.

The catch the notes warn about: randomness. A ``Dropout`` inside ``fn`` draws
a new mask on every call, so the recomputation would use another mask than the
forward pass did, and the gradients would belong to a different network. Save
the random generator's state before the forward pass and restore it for the
recomputation, without disturbing the caller's random state afterwards.

Forbidden: ``torch.utils.checkpoint`` (``checkpoint``, ``checkpoint_sequential``
and its ``CheckpointFunction``).
"""

import torch
from torch import nn


def checkpoint_forward(fn: nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, dict]:
    """The forward half: ``fn(*inputs)`` computed without a graph, and what backward needs.

    Spec:
        - Return ``(output, saved)``. ``output`` is ``fn(*inputs)``, computed
          under ``torch.no_grad()``: it does not require grad, and nothing of
          ``fn``'s intermediates is kept alive by it.
        - ``saved`` is a dict with exactly these entries:
            * ``"inputs"``: the list of the inputs, detached (``x.detach()``
              shares their memory: no copy is needed);
            * ``"rng_state"``: ``torch.get_rng_state()`` taken just BEFORE
              running ``fn``, so that ``fn``'s dropout masks can be drawn again;
            * ``"cuda_rng_state"``, only when an input is on a CUDA device: that
              device's generator state (``torch.cuda.get_rng_state(device)``),
              also taken before running ``fn``. GPU dropout draws from it.
          Nothing else: no intermediate, no copy of the output.
        - ``fn`` and ``inputs`` are left unchanged (``fn``'s own forward may of
          course draw random numbers, as any call of it does).

    Example:
        >>> fn = nn.Linear(2, 1)
        >>> x = torch.ones(3, 2, requires_grad=True)
        >>> out, saved = checkpoint_forward(fn, x)
        >>> out.requires_grad, sorted(saved), saved["inputs"][0].requires_grad
        (False, ['inputs', 'rng_state'], False)
    """
    raise NotImplementedError


def checkpoint_backward(fn: nn.Module, saved: dict, grad_output: torch.Tensor
                        ) -> list[torch.Tensor | None]:
    """The backward half: recompute ``fn`` from ``saved`` and back-propagate ``grad_output``.

    Spec:
        - Make leaf copies of ``saved["inputs"]`` (``x.detach()``) that require
          grad if they are floating point, restore the random state(s) of
          ``saved``, run ``fn`` on them with grad enabled (even if the caller
          runs you under ``no_grad``), and back-propagate ``grad_output`` from
          its output (``torch.autograd.backward``).
        - Return the list of the inputs' gradients (``None`` for an input that
          is not floating point). The gradients of ``fn``'s parameters are
          ADDED to their ``.grad``, as any backward pass does.
        - Afterwards torch's global random state is what it was before the
          call: restore the saved state inside ``torch.random.fork_rng``
          (pass it the CUDA devices of the inputs, or ``devices=[]`` if none).

    Example (no randomness in a Linear, so only the recomputation matters):
        >>> fn = nn.Linear(2, 1, bias=False)
        >>> out, saved = checkpoint_forward(fn, torch.ones(1, 2))
        >>> checkpoint_backward(fn, saved, torch.ones(1, 1))[0] == fn.weight
        tensor([[True, True]])
    """
    raise NotImplementedError


def checkpoint(fn: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    """``fn(*inputs)`` whose backward recomputes ``fn``: a ``torch.autograd.Function``
    whose ``forward`` calls ``checkpoint_forward`` and keeps ``saved`` on ``ctx`` (and
    ``fn``), and whose ``backward`` calls ``checkpoint_backward``.

    Spec:
        - The output equals ``fn(*inputs)`` and requires grad when an input does;
          a backward pass through it gives every input the gradient that
          ``torch.utils.checkpoint.checkpoint(fn, *inputs, use_reentrant=False)``
          gives (and ``fn``'s parameters theirs, added to their ``.grad``). A
          backward pass is ``loss.backward()`` or ``torch.autograd.grad``: both
          must work (the grader uses ``torch.autograd.grad``, which the reentrant
          ``use_reentrant=True`` checkpoint refuses).
        - With a ``Dropout`` in ``fn``, the gradients are those of the masks the
          forward pass drew (a plain forward and backward pass with those masks),
          and the backward pass leaves the caller's random state alone.
        - ``Function.backward`` returns one gradient per argument of ``forward``:
          ``None`` for ``fn``, then one per input.

    Example:
        >>> fn = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
        >>> x = torch.randn(3, 2, requires_grad=True)
        >>> checkpoint(fn, x).sum().backward()      # x.grad as without checkpointing
    """
    raise NotImplementedError
