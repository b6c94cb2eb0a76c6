"""scatter and gather by advanced indexing.

``torch.gather`` reads and ``Tensor.scatter`` writes along one dimension, at
positions an index tensor gives, one position per index element. Rebuild both
with advanced indexing (``t[i0, i1, ...]`` with integer index tensors), which
makes you spell out what the index tensor means.
"""

import torch


def gather(input: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Return ``torch.gather(input, dim, index)`` without calling it.

    Spec (``input`` and ``index`` have the same number of dims, at least 1):
        - For a 3-D input and ``dim=1``:
          ``out[i][j][k] = input[i][index[i][j][k]][k]``. The output has the shape
          of ``index`` and the dtype and device of ``input``. Every other dim
          works the same way: the index value replaces the coordinate of ``dim``.
        - ``dim`` may be negative (``-1`` is the last dim); ``IndexError`` if it is
          out of range, as torch raises.
        - ``ValueError`` (torch raises RuntimeError; here it is a ValueError) when:
          ``index`` is not an int64 or int32 tensor; ``index`` has a different
          number of dims than ``input``; ``index.size(d) > input.size(d)`` for a
          ``d != dim`` (along ``dim`` it may be any length); or an index value is
          outside ``[0, input.size(dim))``.
        - ``input`` and ``index`` may be in any memory layout: a transposed or
          sliced view, or an expanded one (stride 0). Any dtype of ``input`` works,
          float16 and bfloat16 included (values are only copied).
        - The result is a new tensor: never ``input`` or a view of it.

    Example:
        >>> t = torch.tensor([[1, 2], [3, 4]])
        >>> gather(t, 1, torch.tensor([[0, 0], [1, 0]]))
        tensor([[1, 1],
                [4, 3]])

    How: build one coordinate tensor per dim with the shape of ``index``
    (``torch.meshgrid`` of ``torch.arange`` over ``index.shape``, with
    ``indexing="ij"``), put ``index`` in place of the coordinate of ``dim``, and
    index ``input`` with the tuple of them.

    Pitfalls:
        - Python indexing wraps negative values (``t[-1]`` is the last row);
          gather refuses them: check the range yourself.
        - The grid follows the shape of ``index``, not of ``input``: the index may
          be smaller than the input in every dim.
        - ``index_select`` is a different operation: it picks the same positions
          along ``dim`` for every row.

    Forbidden: ``gather``, ``take_along_dim``, ``scatter`` (and their ``Tensor``
    and in-place forms, and ``scatter_add`` / ``scatter_reduce``).
    """
    raise NotImplementedError


def scatter(input: torch.Tensor, dim: int, index: torch.Tensor,
            src: torch.Tensor | float | int) -> torch.Tensor:
    """Return ``input.scatter(dim, index, src)`` (out of place) without calling it.

    Spec (``input``, ``index`` and a tensor ``src`` have the same number of dims, at least 1):
        - Start from a copy of ``input`` and, for every position ``p`` of ``index``,
          write ``src[p]`` at ``p`` with the coordinate of ``dim`` replaced by
          ``index[p]``. For 2-D and ``dim=0``: ``out[index[i][j]][j] = src[i][j]``.
        - ``src`` may be larger than ``index``: only its leading block of the
          shape of ``index`` is used. ``src`` may also be a Python number, written
          at every indexed position.
        - Out of place: ``input`` is left unchanged; the result has its shape,
          dtype (float16 and bfloat16 included) and device, and is a new tensor,
          never ``input`` itself or a view of it, even when ``index`` is empty and
          there is nothing to write.
        - ``input``, ``index`` and ``src`` may be in any memory layout (transposed,
          sliced, expanded with stride 0); only the result is written.
        - When two index elements point at the same position, which value lands
          there is unspecified (torch does not promise an order either); the tests
          only ask that it be one of them.
        - ``dim`` may be negative; ``IndexError`` if it is out of range.
        - ``ValueError`` when: ``index`` is not int64 or int32; ``index`` and
          ``input`` (or a tensor ``src``) differ in number of dims;
          ``index.size(d) > src.size(d)`` for any ``d``; ``index.size(d) >
          input.size(d)`` for a ``d != dim``; an index value is outside
          ``[0, input.size(dim))``; or a tensor ``src`` has another dtype than
          ``input`` (torch refuses to cast it).

    Example:
        >>> x = torch.zeros(3, 2)
        >>> scatter(x, 0, torch.tensor([[2, 0]]), torch.tensor([[5., 6.]]))
        tensor([[0., 6.],
                [0., 0.],
                [5., 0.]])

    How: the same coordinate tensors as in ``gather``, then assign into a clone
    with advanced indexing.

    Pitfall the notes warn about:
        - Writing into ``input`` itself (assigning into it, or into a view of it):
          scatter returns a new tensor, ``scatter_`` is the in-place one.

    A mistake the notes' own code makes:
        - A ``src`` of another dtype: advanced-index assignment
          (``out[coords] = src``) raises a ``RuntimeError`` ("Index put requires the
          source and destination dtypes match"), not the ``ValueError`` asked for,
          while slice assignment and ``copy_`` cast silently. Check ``src.dtype``
          yourself before writing. The notes' one-hot example scatters an int64
          ``src`` into float32 zeros, which torch refuses too.

    Pitfall:
        - Negative index values wrap in Python indexing: check the range.

    Forbidden: as in ``gather``.
    """
    raise NotImplementedError
