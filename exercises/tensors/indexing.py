"""Five indexing operations rebuilt from plain indexing.

``index_select``, ``masked_select``, ``take``, ``where`` and ``index_fill`` each
pick or write elements by position. Each of them is a line or two of ordinary
indexing (``t[idx]``, ``t[mask]``, slices, ``reshape``, ``expand``, ``clone``,
``arange``) once you know exactly which elements it reads and in what order:
that is what this drill asks you to spell out.

Forbidden: ``torch.index_select``, ``torch.masked_select``, ``torch.take``,
``torch.where``, ``torch.index_fill`` (and their ``Tensor`` methods and in-place
forms), ``torch.gather`` and ``torch.take_along_dim``.
"""

import torch


def index_select(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Return ``torch.index_select(x, dim, index)`` without calling it.

    Spec:
        - ``x`` has at least one dim; ``dim`` may be negative (``-1`` is the last).
        - ``index`` is a 1-D int64 or int32 tensor. The result has ``x``'s shape
          except along ``dim``, where it has ``len(index)`` entries: entry ``i``
          along ``dim`` is slice ``index[i]`` of ``x``. Repeats are allowed, an
          empty index gives an empty result.
        - ``IndexError`` if an index value is outside ``[0, x.size(dim))``:
          index_select does NOT wrap negative values around, as Python would.
        - ``x`` may be in any memory layout; the result has ``x``'s dtype and
          device and is a new tensor, never a view of ``x``.

    Example:
        >>> x = torch.tensor([[1, 2, 3], [4, 5, 6]])
        >>> index_select(x, 1, torch.tensor([2, 0, 2]))
        tensor([[3, 1, 3],
                [6, 4, 6]])
    """
    raise NotImplementedError


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return ``torch.masked_select(x, mask)`` without calling it.

    Spec:
        - ``mask`` is a bool tensor. ``x`` and ``mask`` are first broadcast
          against each other (either may be the smaller one); the result is the
          1-D tensor of the elements of the broadcast ``x`` where the broadcast
          mask is True, in row-major order (the last dim varies fastest).
        - Always 1-D, whatever the shapes, even when nothing or everything is
          selected; ``x``'s dtype and device; a new tensor.

    Example:
        >>> x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
        >>> masked_select(x, torch.tensor([True, False, True]))   # the mask broadcasts over rows
        tensor([1., 3., 4., 6.])

    Pitfall: ``x[mask]`` needs a mask of ``x``'s own shape, and a mask larger
    than ``x`` repeats ``x``'s elements: broadcast both to their common shape
    first (``torch.broadcast_shapes`` and ``expand``).
    """
    raise NotImplementedError


def take(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Return ``torch.take(x, index)`` without calling it.

    Spec:
        - ``x`` is read as if it were flattened to 1-D in row-major order of its
          shape (its logical order: ``x[0, 0], x[0, 1], ..., x[1, 0], ...``),
          whatever its strides: a transposed or sliced ``x`` is read in that
          logical order, not in the order its elements lie in memory.
        - ``index`` is an int64 tensor of any shape; the result has ``index``'s
          shape, entry ``p`` being flat element ``index[p]``. Negative values
          count from the end, as in Python (``-1`` is the last element).
        - ``IndexError`` if a value is outside ``[-x.numel(), x.numel())``.
        - ``x``'s dtype and device; a new tensor.

    Example:
        >>> x = torch.tensor([[1, 2, 3], [4, 5, 6]])
        >>> take(x.t(), torch.tensor([[0, 1], [-1, 2]]))   # x.t() is [[1, 4], [2, 5], [3, 6]]
        tensor([[1, 4],
                [6, 2]])

    Pitfall the notes warn about: ``x.view(-1)`` refuses a transposed tensor
    (the notes: ``view`` sometimes fails, use ``reshape``), and reading the
    storage (``as_strided`` with stride 1, ``x.data_ptr()`` arithmetic) gives the
    memory order: flatten with ``reshape`` (or ``flatten``), which copies when
    it has to.
    """
    raise NotImplementedError


def where(condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return ``torch.where(condition, x, y)`` without calling it.

    Spec:
        - ``condition`` is a bool tensor; ``x`` and ``y`` are tensors of one
          dtype. The three broadcast to one shape, the result's; an element is
          taken from ``x`` where ``condition`` is True and from ``y`` elsewhere.
        - Any values: ``inf`` and ``nan`` in the element NOT taken must not leak
          into the result.
        - ``x``'s dtype and device; a new tensor.

    Example:
        >>> where(torch.tensor([True, False]), torch.tensor([1., 2.]), torch.tensor(float("inf")))
        tensor([1., inf])

    Pitfall: ``condition * x + ~condition * y`` looks right and is wrong as
    soon as the element not taken is ``inf`` or ``nan``: ``0 * inf`` is
    ``nan``. Select, do not blend: fill a copy of the broadcast ``y`` with the
    broadcast ``x`` through the mask.
    """
    raise NotImplementedError


def index_fill(x: torch.Tensor, dim: int, index: torch.Tensor,
               value: float | int | torch.Tensor) -> torch.Tensor:
    """Return ``torch.index_fill(x, dim, index, value)`` (out of place) without calling it.

    Spec:
        - A copy of ``x`` in which every slice along ``dim`` named by ``index``
          is filled with ``value``. ``dim`` may be negative.
        - ``index`` is a 1-D int64 tensor; repeats are allowed, and negative
          values count from the end as in Python (``-1`` is the last slice),
          unlike ``index_select``. ``IndexError`` if a value is outside
          ``[-x.size(dim), x.size(dim))``.
        - ``value`` is a Python number or a 0-d tensor, cast to ``x``'s dtype.
        - Out of place: ``x`` is left unchanged (it may be in any memory layout,
          even an expanded one that cannot be written); the result has ``x``'s
          shape, dtype and device and is a new tensor.

    Example:
        >>> x = torch.zeros(2, 3)
        >>> index_fill(x, 1, torch.tensor([0, -1]), 7.0)
        tensor([[7., 0., 7.],
                [7., 0., 7.]])

    Pitfall: ``x[:, index] = value`` writes into the caller's tensor: clone
    first (into a contiguous copy: an expanded ``x`` has one element behind
    many positions).
    """
    raise NotImplementedError
