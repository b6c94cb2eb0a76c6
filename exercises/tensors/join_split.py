"""Joining and splitting tensors by hand: ``stack``, ``cat``, ``split`` and ``chunk``.

``stack`` puts tensors of one shape side by side along a NEW dim; ``cat`` joins tensors
along a dim they already have; ``split`` and ``chunk`` cut one tensor into pieces along
a dim, and the pieces are views of it (no copy). Write all four with new tensors,
indexing, ``narrow`` and copies, and match torch's own, corner cases included.
"""

import torch


def stack(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Return the tensors joined along a new dim ``dim``, like ``torch.stack(tensors, dim)``.

    Spec:
        - ``tensors`` is a non-empty list of tensors of one shape, dtype and device.
        - The result has one dim more than each tensor: its dim ``dim`` has size
          ``len(tensors)``, and ``result.select(dim, i)`` is ``tensors[i]``.
        - ``dim`` counts the RESULT's dims: it lies in ``[-(ndim + 1), ndim]`` for
          tensors of ``ndim`` dims, and ``-1`` puts the new dim last.
        - The result is a new tensor (even for one tensor): it shares no memory with
          the inputs, which stay unchanged. It has their dtype and device.
        - Raise ``ValueError`` if ``tensors`` is empty or the shapes differ; raise
          ``IndexError`` if ``dim`` is out of range.

    Example:
        >>> a, b = torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])
        >>> stack([a, b])
        tensor([[1, 2, 3],
                [4, 5, 6]])
        >>> stack([a, b], dim=-1)
        tensor([[1, 4],
                [2, 5],
                [3, 6]])

    Pitfalls:
        - The notes warn: stack adds a new dim, cat joins along one that exists
          (000, section 31; 004, on joining and splitting).
        - The notes show the range of ``dim`` for 3 x 3 inputs: 0 to 2 work, 3 raises
          "expected to be in range of [-3, 2]" (001, torch.stack). There are ndim + 1
          places for the new dim, so a negative ``dim`` counts from the end of the
          result: wrap it with ``ndim + 1``, not ``ndim``.

    Forbidden: ``torch.stack``, ``torch.cat`` and their relatives (``hstack``,
    ``vstack``, ``concat``...), ``torch.split``, ``torch.chunk`` and their relatives
    (``tensor_split``, ``hsplit``...), and nested tensors (``to_padded_tensor``).
    """
    raise NotImplementedError


def cat(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Return the tensors joined along their dim ``dim``, like ``torch.cat(tensors, dim)``.

    Spec:
        - ``tensors`` is a non-empty list of tensors of one dtype and device, each with
          at least one dim. They have the same number of dims and the same sizes
          except along ``dim``, where the result's size is the sum of theirs.
        - ``dim`` lies in ``[-ndim, ndim - 1]``; a negative one counts from the end.
        - torch's legacy rule: a 1-D tensor of shape ``(0,)`` takes no part at all,
          whatever the others' shapes, and ``dim`` is checked against the first tensor
          that takes part. (It is what makes the loop ``out = torch.tensor([])``,
          ``out = torch.cat([out, x])`` work.) If no tensor takes part, the result is
          an empty ``(0,)`` tensor of their dtype.
        - The result is a new tensor (even for one tensor): it shares no memory with
          the inputs, which stay unchanged.
        - Raise ``ValueError`` if ``tensors`` is empty, a tensor is 0-d, or the number
          of dims or a size outside ``dim`` differ; raise ``IndexError`` if ``dim`` is
          out of range.

    Example:
        >>> a = torch.tensor([[1, 2], [3, 4]])
        >>> cat([a, torch.tensor([[5, 6]])])
        tensor([[1, 2],
                [3, 4],
                [5, 6]])
        >>> cat([a, a], dim=-1)
        tensor([[1, 2, 1, 2],
                [3, 4, 3, 4]])
        >>> cat([torch.tensor([], dtype=torch.int64), a]).shape   # the legacy rule
        torch.Size([2, 2])

    Pitfall: the notes warn (000, section 31; 004): cat adds no dim. Joining three
    2 x 2 tensors along dim 0 gives 6 x 2; stacking them gives 3 x 2 x 2 (004's own
    example).

    Forbidden: the APIs listed in ``stack``.
    """
    raise NotImplementedError


def split(x: torch.Tensor, split_size_or_sections: int | list[int],
          dim: int = 0) -> tuple[torch.Tensor, ...]:
    """Return ``x`` cut along ``dim`` into pieces, like ``torch.split(x, split_size_or_sections, dim)``.

    Spec:
        - An int ``k`` is the size of each piece: pieces of ``k`` along ``dim``, the
          last one shorter when ``k`` does not divide the size. There is always at
          least one piece: ``k`` at least the size gives ``x`` whole, and a dim of size
          0 gives one empty piece. ``k`` must be >= 0, and 0 only for a dim of size 0.
        - A list (or tuple) of ints gives the size of each piece, in order; the sizes
          must be >= 0 (0 gives an empty piece) and add up to the size of ``dim``.
        - ``x`` has at least one dim; ``dim`` lies in ``[-ndim, ndim - 1]``.
        - Each piece is a VIEW of ``x`` (``narrow`` or a slice), not a copy: it shares
          ``x``'s memory, with ``x``'s strides, and writing into a piece writes into
          ``x``. ``x`` itself stays unchanged.
        - Return a tuple of tensors.
        - Raise ``ValueError`` if ``x`` is 0-d, ``k`` is negative or 0 for a dim that
          is not empty, or the sections are negative or do not add up; raise
          ``IndexError`` if ``dim`` is out of range.

    Example:
        >>> x = torch.arange(5)
        >>> split(x, 2)
        (tensor([0, 1]), tensor([2, 3]), tensor([4]))
        >>> split(x, [4, 0, 1])
        (tensor([0, 1, 2, 3]), tensor([], dtype=torch.int64), tensor([4]))

    Pitfall: an int is the size of each piece, not how many pieces: ``split(x, 2)``
    of 6 rows gives three pieces of 2. The notes' text (004, on joining and splitting)
    says split can also cut into a given number of equal pieces; it cannot (that is
    ``chunk``), as their own example, two rows per piece, shows.

    Forbidden: the APIs listed in ``stack``; ``narrow`` and slicing are yours.
    """
    raise NotImplementedError


def chunk(x: torch.Tensor, chunks: int, dim: int = 0) -> tuple[torch.Tensor, ...]:
    """Return ``x`` cut along ``dim`` into at most ``chunks`` views, like ``torch.chunk(x, chunks, dim)``.

    Spec:
        - Each piece has ``ceil(n / chunks)`` along ``dim`` (``n`` its size), the last
          one what is left: this is ``split`` with that size. So there may be FEWER
          than ``chunks`` pieces: 5 rows in 4 chunks is 2, 2, 1.
        - A dim of size 0 gives exactly ``chunks`` empty pieces.
        - ``x`` has at least one dim; ``dim`` lies in ``[-ndim, ndim - 1]``.
        - Each piece is a view of ``x``, as in ``split``; ``x`` stays unchanged.
        - Return a tuple of tensors.
        - Raise ``ValueError`` if ``chunks < 1`` or ``x`` is 0-d; raise ``IndexError``
          if ``dim`` is out of range.

    Example:
        >>> [len(piece) for piece in chunk(torch.arange(5), 4)]
        [2, 2, 1]
        >>> [len(piece) for piece in chunk(torch.arange(6), 4)]
        [2, 2, 2]

    Pitfall: spreading the rest over the first pieces (2, 1, 1, 1) is
    ``tensor_split``, not ``chunk``; so is always returning ``chunks`` pieces.

    Forbidden: the APIs listed in ``stack``.
    """
    raise NotImplementedError
