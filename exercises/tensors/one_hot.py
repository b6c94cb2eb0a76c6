"""One-hot encoding with ``scatter_``.

Turn integer class labels into one-hot vectors, exactly as
``torch.nn.functional.one_hot`` does, but build the result yourself with
``Tensor.scatter_``.
"""

import torch


def one_hot(labels: torch.Tensor, num_classes: int = -1) -> torch.Tensor:
    """Return the one-hot encoding of ``labels``.

    Spec:
        - ``labels`` is an integer tensor of any shape ``S`` (0-d included), in any
          memory layout: a transposed or sliced view, or an expanded one (stride 0).
        - The result has shape ``(*S, C)`` and dtype ``torch.int64``: position
          ``[..., labels[...]]`` holds 1, everything else 0.
        - ``C = num_classes``; when ``num_classes == -1``, infer
          ``C = labels.max() + 1``.
        - Raise ``ValueError`` if ``labels`` is not an integer dtype (float or
          bool), if a label is negative, if a label is ``>= num_classes``, or if
          ``C`` must be inferred from an empty tensor.
        - Leave ``labels`` unchanged (no in-place ``unsqueeze_`` on it).

    Example:
        >>> one_hot(torch.tensor([2, 0]), num_classes=3)
        tensor([[0, 0, 1],
                [1, 0, 0]])

    How: make a zeros tensor of shape ``(*S, C)``, then
    ``scatter_(-1, labels.unsqueeze(-1), 1)`` writes the ones along the last dim.

    A mistake the notes' own code makes:
        - ``torch.zeros(...)`` is float32 by default: the one-hot must be int64.
          The notes build their one-hots with ``torch.zeros(...)`` and no ``dtype``,
          so theirs are float32.

    Pitfalls the notes warn about:
        - C is ``max + 1``, not ``max`` (label 3 needs 4 classes).
        - ``labels.view(-1)`` raises on a non-contiguous tensor (a transposed one,
          say); ``unsqueeze(-1)`` (or ``reshape``) works on any layout.

    Pitfall:
        - ``scatter_`` needs an int64 index: convert int32/uint8 labels first.

    Forbidden: ``F.one_hot``.
    """
    raise NotImplementedError
