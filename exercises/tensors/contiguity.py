"""Contiguity from sizes and strides alone.

A strided tensor is a view on flat storage: element ``[i0, i1, ...]`` lives at
``offset + i0 * stride[0] + i1 * stride[1] + ...``. "Contiguous" in PyTorch means
row-major (C order) with no gaps. Decide it yourself from the numbers, the way
``Tensor.is_contiguous()`` does, and compute the strides a fresh tensor gets.
"""

import torch  # noqa: F401  (handy for experiments; the answers are plain Python)


def is_contiguous(size: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Return True exactly when PyTorch calls a tensor of this size and stride contiguous.

    Spec:
        - ``size`` and ``stride`` are tuples of ints of the same length (one entry
          per dimension; ``()`` and ``()`` describe a 0-d tensor, which is contiguous).
        - Row-major contiguity: the last dimension has stride 1, and each earlier
          dimension's stride is the product of the sizes after it.
        - Dimensions of size 1 do not matter: you never step along them, so their
          stride can be anything (a ``(3, 1)`` tensor with strides ``(1, 7)`` is
          contiguous). Skip them, and do not count them in the product either.
        - A tensor with no elements (some size is 0) is contiguous whatever its
          strides: shape ``(0, 2)`` with strides ``(10, 2)`` counts as contiguous.
        - Return a real Python ``bool`` (not an int, not a tensor).
        - Raise ``ValueError`` if ``size`` and ``stride`` have different lengths or
          if a size is negative.

    Example:
        >>> is_contiguous((2, 3), (3, 1))     # torch.empty(2, 3)
        True
        >>> is_contiguous((3, 2), (1, 3))     # torch.empty(2, 3).t()
        False
        >>> is_contiguous((2, 3), (0, 1))     # torch.empty(1, 3).expand(2, 3)
        False
        >>> is_contiguous((2, 1, 3), (3, 99, 1))
        True

    How: walk the dimensions from the last one, keeping the stride you expect
    next (start at 1). A size-1 dimension is skipped; any other dimension must
    have exactly the expected stride, after which the expectation is multiplied
    by its size.

    A mistake the notes' own code makes:
        - Forgetting the empty-tensor rule: check for a size-0 dimension first.
          The notes' ``isContiguous`` has no such rule: it calls a ``(0, 3)``
          tensor with strides ``(1, 1)`` non-contiguous, where torch says contiguous.

    Pitfall the notes warn about:
        - Comparing strides of size-1 dimensions (``unsqueeze`` and slicing leave
          arbitrary strides there, and torch ignores them). The notes' code skips
          them, though the formula written above it does not.

    Pitfall:
        - Walking from the first dimension gives column-major (Fortran) order.

    Forbidden: ``Tensor.is_contiguous``, ``Tensor.stride``, ``torch.empty_strided``
    and ``Tensor.as_strided``, and torch's own Python helpers that answer from the
    numbers (in ``torch._prims_common`` and ``torch.fx.experimental``); the point is
    to reason with the numbers. (The grader
    refuses them by name; the first two are plain methods with no operator of their
    own, so a route around the name, through ``torch._C`` or ``torch.ops``, is not
    refused but flagged for your instructor.)
    """
    raise NotImplementedError


def contiguous_strides(size: tuple[int, ...]) -> tuple[int, ...]:
    """Return the strides of ``torch.empty(size)``: the row-major strides of ``size``.

    Spec:
        - The last stride is 1; each earlier stride is the next stride times the
          next size, where a size of 0 counts as 1 (torch multiplies by
          ``max(size, 1)``, so ``torch.empty(2, 0, 3).stride() == (3, 3, 1)``, not
          ``(0, 3, 1)``).
        - ``()`` gives ``()``.
        - Return a tuple of Python ints.
        - Raise ``ValueError`` if a size is negative.

    Example:
        >>> contiguous_strides((2, 3, 4))
        (12, 4, 1)
        >>> contiguous_strides((2, 0, 3))
        (3, 3, 1)

    Forbidden: ``Tensor.stride`` (and the other APIs listed in ``is_contiguous``).
    """
    raise NotImplementedError
