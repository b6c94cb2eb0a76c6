"""Broadcasting from shapes and strides alone.

Broadcasting lines shapes up from the RIGHT: trailing dimensions are compared
pairwise, a missing leading dimension counts as size 1, and a size-1 dimension
stretches to match the other size. Stretching copies nothing: ``expand`` gives the
stretched dimension stride 0, so every step along it reads the same element.
Work both out from the numbers, as ``torch.broadcast_shapes`` and
``Tensor.expand`` do.
"""

import torch  # noqa: F401  (handy for experiments; the answers are plain Python)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Return the shape that all ``shapes`` broadcast to, like ``torch.broadcast_shapes``.

    Spec:
        - Each shape is a tuple of non-negative ints; there may be any number of
          shapes (none at all gives ``()``, the shape of a scalar).
        - Align the shapes on their LAST dimension. The result has as many dims as
          the longest shape; a shorter shape counts as having size 1 in the
          leading dims it lacks.
        - In each aligned dim, the sizes other than 1 must all be equal, and that
          size is the result; if every size there is 1, the result is 1.
        - Size 0 is an ordinary size: 0 with 1 gives 0, but 0 with 3 clashes.
        - Return a tuple of Python ints.
        - Raise ``ValueError`` when two sizes clash; the message must name the two
          clashing sizes (for example "size 3 vs 4 at dim -1"), so the reader can
          find them. Raise ``ValueError`` for a negative size too.

    Example:
        >>> broadcast_shape((8, 1, 6, 1), (7, 1, 5))
        (8, 7, 6, 5)
        >>> broadcast_shape((5, 0), (1,))
        (5, 0)
        >>> broadcast_shape((2, 3), (4,))
        Traceback (most recent call last):
        ValueError: shapes (2, 3) and (4,) do not broadcast: size 3 vs 4 at dim -1

    Pitfall the notes warn about:
        - Aligning on the first dimension: (3,) and (3, 1) broadcast to (3, 3),
          not (3, 1). Align from the right, as the notes stress.

    Where the notes go wrong:
        - Taking the max of the sizes: max(0, 1) is 1, but 0 broadcast with 1 is 0.
          The notes' rules of broadcasting say each size is the larger of the two,
          which holds only while no size is 0.

    Forbidden: ``torch.broadcast_shapes``, ``torch.broadcast_to``,
    ``torch.broadcast_tensors``, ``Tensor.expand``; the point is to reason with the
    numbers.
    """
    raise NotImplementedError


def broadcast_strides(size: tuple[int, ...], stride: tuple[int, ...],
                      target_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Return the strides of ``x.expand(target_shape)`` for a tensor ``x`` of this size and stride.

    Spec:
        - ``size`` and ``stride`` describe ``x`` (same length, one entry per dim);
          ``target_shape`` is a tuple of non-negative ints with at least as many
          dims as ``size``. Align ``size`` with the LAST dims of ``target_shape``.
        - A dim whose size equals the target size keeps its stride (a size-1 dim
          expanded to 1 keeps its stride too).
        - A size-1 dim stretched to any other size (0 included) gets stride 0.
        - A new leading dim (one ``x`` lacks) counts as a size-1 dim whose stride
          is what ``unsqueeze(0)`` would give it: the size times the stride of the
          result dim just to its right (0 when there is none, for a 0-d ``x``).
          So a new dim of target size 1 keeps that stride, any other gets 0.
          Work from the last dim to the first to have the right-hand one ready.
        - Return a tuple of Python ints, one per dim of ``target_shape``.
        - Raise ``ValueError`` when ``x`` cannot be expanded: ``target_shape`` has
          fewer dims than ``size``, or a dim of size other than 1 differs from
          its target size.

    Example:
        >>> broadcast_strides((3, 1), (1, 3), (2, 3, 4))   # x = torch.empty(1, 3).t()
        (0, 1, 0)
        >>> broadcast_strides((1, 3), (7, 1), (1, 3))      # nothing stretches
        (7, 1)
        >>> broadcast_strides((3,), (2,), (1, 3))          # new size-1 dim: 3 * 2
        (6, 2)

    Pitfalls:
        - Giving every size-1 dim stride 0, even one that stays size 1: expand
          leaves it alone.
        - Giving a new leading dim of size 2 or more a nonzero stride: it is
          broadcast, so nothing moves in memory along it (stride 0).

    Pitfall the notes warn about:
        - Aligning ``size`` with the first dims of ``target_shape`` (the notes:
          align from the right).

    Forbidden: ``Tensor.expand`` (and the APIs listed in ``broadcast_shape``).
    """
    raise NotImplementedError
