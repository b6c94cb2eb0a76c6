"""Views: the strides of ``view``, ``permute`` and ``squeeze``, from the numbers.

A view is a new size and stride over the same storage: nothing is copied. Element
``[i0, i1, ...]`` of a tensor lives at ``offset + i0 * stride[0] + i1 * stride[1] + ...``,
so every view is only new numbers. Work out the numbers ``x.view(shape)``,
``x.permute(dims)`` and ``x.squeeze(dim)`` would have for a tensor ``x`` of a given
size and stride, and say when no view exists at all.
"""

import torch  # noqa: F401  (handy for experiments; the answers are plain Python)


def view_strides(size: tuple[int, ...], stride: tuple[int, ...],
                 shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Return the strides of ``x.view(shape)`` for a tensor ``x`` of this size and stride,
    or None when ``x`` has no view of that shape (torch raises "view size is not
    compatible with input tensor's size and stride", and only ``reshape`` would do,
    by copying).

    Spec:
        - ``size`` and ``stride`` describe ``x`` (same length; sizes >= 0, strides >= 0);
          ``shape`` is the shape asked for, with at most one ``-1``, which stands for
          whatever size makes the element counts equal.
        - Runs: group the dims of ``x`` from the last one backwards. A run starts at a
          dim, and its base is that dim's stride. The dim before joins the run if its
          size is 1, or if one step along it jumps exactly over the run so far: its
          stride is (the number of elements of the run so far) x (the base).
          Otherwise a new run starts there. A contiguous tensor is one run.
        - A view may cut a run into new dims any way it likes, but never join elements
          of two runs into one new dim. Hand out the runs from the last one: each fills
          new dims from the right until they hold exactly its elements, and a new dim
          gets the stride (the run's base) x (the number of the run's elements handed
          out to its right). A new dim of size 1 goes to the run of the new dim on its
          right (the last run when there is none), by the same rule. If a new dim would
          need elements of two runs, or dims are left over, the answer is None.
        - Two cases come first. A 0-d ``x`` (``size == ()``) views as any shape of ones,
          every stride 1. An ``x`` with no elements (a size is 0) always has a view: the
          same shape keeps ``x``'s strides, any other shape gets the strides of
          ``torch.empty(shape)`` (a size of 0 counts as 1 in the products).
        - Return a tuple of Python ints (one per dim of ``shape``), or ``None``.
        - Raise ``ValueError`` if ``size`` and ``stride`` differ in length or a size is
          negative, and if ``shape`` is not a shape for ``x``'s elements: more than one
          ``-1``, a size below ``-1``, a different element count, or a ``-1`` beside a
          0 (which leaves the ``-1`` ambiguous). No view is not an error: it is None.

    Example:
        >>> view_strides((2, 3), (3, 1), (3, 2))         # torch.empty(2, 3): one run
        (2, 1)
        >>> view_strides((2, 3), (3, 1), (-1,))
        (1,)
        >>> print(view_strides((3, 2), (1, 3), (6,)))   # torch.empty(2, 3).t(): two runs
        None
        >>> view_strides((3, 2), (1, 3), (3, 1, 2))     # ... but cutting or adding 1s is fine
        (1, 6, 3)
        >>> view_strides((2, 3, 4, 4), (48, 1, 12, 3), (2, 3, 16))   # channels last
        (48, 1, 3)
        >>> print(view_strides((2, 3, 4, 4), (48, 1, 12, 3), (2, 48)))
        None

    Pitfalls:
        - The notes say ``view`` needs a contiguous tensor (000, section 18; 001,
          "tensor.contiguous"). That is enough, not necessary: a transposed or a
          channels-last tensor still has views, as long as no new dim joins two runs.
          Answering None for every non-contiguous tensor loses points.
        - The notes warn that ``view`` sometimes fails and send you to ``reshape``
          (004, on changing dimensions). Here you say exactly when: ``reshape``
          copies precisely where this function answers None.
        - A new dim of size 1 gets its stride by the rule above, like any other: not
          0, and not its neighbour's (code ported from numpy differs here).

    Forbidden: ``Tensor.view`` and everything else that makes the view for you
    (``reshape``, ``flatten``, ``unflatten``, ``view_as``, ``as_strided``,
    ``torch.empty_strided``, ``Tensor.set_``...), and torch's own Python helpers that
    compute view strides from numbers; the point is to reason with the numbers.
    """
    raise NotImplementedError


def permute_strides(size: tuple[int, ...], stride: tuple[int, ...],
                    dims: tuple[int, ...]) -> tuple[int, ...]:
    """Return the strides of ``x.permute(dims)`` for a tensor ``x`` of this size and stride.

    Spec:
        - ``dims`` lists every dim of ``x`` once, in the new order; a negative dim
          counts from the end (``-1`` is the last).
        - Dim ``i`` of the result is dim ``dims[i]`` of ``x``, and it keeps that dim's
          stride: permuting moves no element in memory.
        - Return a tuple of Python ints.
        - Raise ``ValueError`` if ``size`` and ``stride`` differ in length, a size is
          negative, ``dims`` has not one entry per dim, or a dim comes twice; raise
          ``IndexError`` if a dim is out of range (``[-ndim, ndim - 1]``).

    Example:
        >>> permute_strides((2, 4, 4, 3), (48, 12, 3, 1), (0, 3, 1, 2))   # NHWC -> NCHW
        (48, 1, 12, 3)
        >>> permute_strides((2, 3), (3, 1), (-1, 0))                        # a transpose
        (1, 3)

    Pitfall: images stored as (Batch, Height, Width, Channel), turned into PyTorch's
    (Batch, Channel, Height, Width) the way the notes do it, with transposes (004, on
    changing dimensions): each dim takes its stride along (the channel stride stays
    1). A ``view(N, C, H, W)`` of the same data has the right shape, but its strides
    ``(C*H*W, H*W, W, 1)`` read the memory in the old order: the pixels come out
    scrambled. Row-major strides for the permuted sizes are that view, not a permute.

    Forbidden: ``Tensor.permute`` and the other APIs listed in ``view_strides``
    (``transpose``, ``movedim``, ``mT``...).
    """
    raise NotImplementedError


def squeeze_strides(size: tuple[int, ...], stride: tuple[int, ...],
                    dim: int | None) -> tuple[int, ...]:
    """Return the strides of ``x.squeeze(dim)`` (``x.squeeze()`` when ``dim`` is None).

    Spec:
        - ``dim`` is an int, or None for ``x.squeeze()``: then every dim of size 1
          goes, with its stride.
        - With a ``dim`` (negative counts from the end), that dim goes if its size is
          1; a dim of any other size stays, and the strides come back unchanged
          (not an error). A 0-d ``x`` stays 0-d (its only dim is ``0`` or ``-1``).
        - The strides of the dims that stay do not change.
        - Return a tuple of Python ints.
        - Raise ``ValueError`` if ``size`` and ``stride`` differ in length or a size is
          negative; raise ``IndexError`` if ``dim`` is out of range (``[-ndim, ndim - 1]``,
          ``[-1, 0]`` for a 0-d ``x``).

    Example:
        >>> squeeze_strides((2, 1, 3, 1), (3, 3, 1, 1), None)
        (3, 1)
        >>> squeeze_strides((2, 1, 3, 1), (3, 3, 1, 1), 1)
        (3, 1, 1)
        >>> squeeze_strides((2, 1, 3, 1), (3, 3, 1, 1), 0)   # size 2 stays
        (3, 3, 1, 1)

    Pitfall: a ``dim`` whose size is not 1 is no error. The notes say so (002, Tensor: a
    dim of size 1 goes, otherwise the tensor stays as it is); numpy's
    ``squeeze(axis)`` raises there, and so does code ported from it.

    Forbidden: ``Tensor.squeeze`` and the other APIs listed in ``view_strides``.
    """
    raise NotImplementedError
