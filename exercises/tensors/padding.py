"""Padding variable-length sequences into one batch tensor.

Sequences of different lengths (sentences, audio clips) cannot be stacked
directly: a batch tensor needs one length. Pad every sequence at the end up to
the longest one, keep the true lengths for masks and ``pack_padded_sequence``,
and pad a one-hot sequence to a fixed length without letting it be cut short.
"""

import torch
import torch.nn.functional as F  # noqa: F401  (F.pad is allowed and handy for pad_one_hot)


def pad_sequences(seqs: list[torch.Tensor],
                  padding_value: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack sequences of different lengths into one batch-first tensor.

    Spec:
        - ``seqs`` is a non-empty list of ``B`` tensors of shapes ``(T_i, *rest)``:
          the lengths ``T_i`` may differ (0 included), the trailing dims ``rest``
          are the same for all, and so are the dtype and device. Any dtype (float16
          and bfloat16 included) and any memory layout (a transposed or sliced view,
          an expanded one).
        - Return a tuple ``(padded, lengths)``:
            * ``padded`` has shape ``(B, T_max, *rest)`` (batch first), the dtype and
              device of the sequences; ``padded[i, :T_i]`` is ``seqs[i]`` and every
              position after it holds ``padding_value``. It is a new tensor, even for
              a single sequence (never a view of one).
            * ``lengths`` is a 1-D ``torch.int64`` tensor ``[T_0, ..., T_{B-1}]`` on
              the CPU (``pack_padded_sequence`` wants its lengths there).
        - Raise ``ValueError`` if ``seqs`` is empty or if the trailing dims differ (in
          any dim, or in how many there are).
        - Leave the input tensors unchanged.

    Example:
        >>> padded, lengths = pad_sequences([torch.tensor([1., 2., 3.]), torch.tensor([4.])],
        ...                                 padding_value=-1.0)
        >>> padded
        tensor([[ 1.,  2.,  3.],
                [ 4., -1., -1.]])
        >>> lengths
        tensor([3, 1])

    How: allocate the whole ``(B, T_max, *rest)`` result filled with
    ``padding_value``, then copy each sequence into the front of its row.

    Pitfalls:
        - ``torch.full(shape, 0.0)`` and ``torch.zeros(shape)`` are float32 unless
          you pass ``dtype=`` (and ``device=``): integer token ids must stay integers.
        - ``pad_sequence``'s default layout is time first, ``(T_max, B, *rest)``;
          this function returns batch first.
        - ``padding_value`` is not always 0: do not build the result with zeros.

    Forbidden: ``torch.nn.utils.rnn.pad_sequence`` (and what calls it, such as
    ``pack_sequence``); build the batch yourself.
    """
    raise NotImplementedError


def pad_one_hot(sequence: torch.Tensor, target_length: int) -> torch.Tensor:
    """Pad a one-hot sequence with all-zero rows at the end, up to ``target_length``.

    Spec:
        - ``sequence`` has shape ``(T, C)``: one row per time step (a one-hot row over
          ``C`` classes, e.g. from ``F.one_hot``).
        - Return a tensor of shape ``(target_length, C)``, same dtype and device:
          the ``T`` rows of ``sequence`` first, then ``target_length - T`` rows of
          zeros ("no token"). ``target_length == T`` gives an equal tensor, still a
          new one (never ``sequence`` itself or a view of it).
        - ``sequence`` may be in any memory layout (a transposed or sliced view).
        - Raise ``ValueError`` if ``target_length < T`` (the padding would be
          negative): never drop time steps silently.

    Example:
        >>> pad_one_hot(torch.tensor([[0, 1, 0], [1, 0, 0]]), 4)
        tensor([[0, 1, 0],
                [1, 0, 0],
                [0, 0, 0],
                [0, 0, 0]])

    How: ``F.pad`` takes the padding amounts for the LAST dimension first:
    ``(left, right)`` of dim -1, then ``(top, bottom)`` of dim -2. Here the classes
    get nothing and the time steps get ``target_length - T`` at the bottom.
    (``torch.cat`` with a block of zeros works too.)

    Pitfall:
        - ``F.pad(x, (0, n))`` pads the last dimension, the classes, not time.

    Pitfall the notes warn about:
        - ``F.pad`` with a negative amount crops without any error: check first
          (the notes' ``pad_one_hot_sequence`` raises ``ValueError`` for it).
    """
    raise NotImplementedError
