"""repeat_interleave from cumulative sums and an index.

``torch.repeat_interleave`` repeats every element (or every slice along a dim)
in place: ``[a, b]`` with repeats 2 becomes ``[a, a, b, b]``, not the tiled
``[a, b, a, b]`` of ``Tensor.repeat``. Build it from the counts yourself: work out,
for every output position, which input position it copies, then gather those.
"""

import torch


def repeat_interleave(x: torch.Tensor, repeats: int | torch.Tensor,
                      dim: int | None = None) -> torch.Tensor:
    """Return ``torch.repeat_interleave(x, repeats, dim)`` without calling it.

    Spec:
        - ``dim=None``: work on ``x.flatten()``; the result is 1-D.
        - Otherwise slice ``i`` along ``dim`` appears ``r_i`` times in a row; the
          result has the shape of ``x`` except along ``dim``, where its size is
          ``sum(r_i)``. ``dim`` may be negative; ``IndexError`` if out of range
          (as torch raises).
        - ``repeats`` is a Python int (the same count for every slice) or a 1-D
          int64 tensor with one count per slice (length ``x.size(dim)``, or
          ``x.numel()`` when ``dim`` is None). A 1-element tensor is used for every
          slice, as torch does. A count of 0 drops that slice.
        - The result has the dtype (float16 and bfloat16 included) and device of
          ``x``, and is a new tensor: never ``x`` itself or a view of it, even when
          every count is 1. ``x`` is left unchanged.
        - ``x`` (and a repeats tensor) may be in any memory layout: a transposed or
          sliced view, or an expanded one (stride 0).
        - Raise ``ValueError`` (torch raises RuntimeError) for a negative count, or
          for a repeats tensor of the wrong length (neither 1 nor the number of
          slices).

    Example:
        >>> x = torch.tensor([[1, 2], [3, 4]])
        >>> repeat_interleave(x, 2)
        tensor([1, 1, 2, 2, 3, 3, 4, 4])
        >>> repeat_interleave(x, torch.tensor([1, 2]), dim=0)
        tensor([[1, 2],
                [3, 4],
                [3, 4]])

    How: for a repeats tensor, ``ends = repeats.cumsum(0)`` says where each
    slice's copies stop; output position ``j`` copies the slice ``i`` with
    ``ends[i - 1] <= j < ends[i]``, which ``torch.searchsorted(ends, positions,
    right=True)`` finds for all positions at once. Then ``index_select`` along
    ``dim``. An int count is the same as a tensor of equal counts (or use
    ``unsqueeze``, ``expand`` and ``flatten``).

    Pitfalls the notes warn about:
        - ``Tensor.repeat`` (or ``tile``) tiles the whole tensor; that is not
          interleaving.
        - ``dim=None`` flattens; it does not mean ``dim=0``. ``x.view(-1)`` raises on a
          transposed x: ``flatten`` or ``reshape`` work on any layout.

    Pitfalls:
        - Zero counts: consecutive equal entries in ``ends``; ``right=False``
          would point positions at a slice repeated 0 times.
        - Keep every tensor you create on ``x.device``.

    Forbidden: ``torch.repeat_interleave`` and ``Tensor.repeat_interleave``.
    """
    raise NotImplementedError
