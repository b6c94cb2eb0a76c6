"""Mistake: checks how many trailing dims the sequences have and the last one only, and turns
a failed copy into a ValueError: a middle trailing dim that differs is caught where the copy
clashes, but where a later sequence has size 1 there (sequence 0 (T, 2, 3), sequence 1
(T, 1, 3)) the copy broadcasts it silently and the batch holds made-up rows (an earlier
hand-written corpus: issue 27). The spec: ValueError if the trailing dims differ, in any dim."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_different_trailing_dims_raise_value_error",)


def pad_sequences(seqs: list[torch.Tensor],
                  padding_value: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch-first ``(B, T_max, *rest)`` padding of ``seqs`` and their int64 CPU lengths."""
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence")
    rest = seqs[0].shape[1:]
    for i, seq in enumerate(seqs):
        if seq.dim() != len(rest) + 1 or (len(rest) and seq.shape[-1] != rest[-1]):
            raise ValueError(f"sequence {i} has trailing dims {tuple(seq.shape[1:])}, "
                             f"sequence 0 has {tuple(rest)}")
    lengths = torch.tensor([seq.shape[0] for seq in seqs], dtype=torch.int64)
    t_max = int(lengths.max())
    padded = torch.full((len(seqs), t_max, *rest), padding_value,
                        dtype=seqs[0].dtype, device=seqs[0].device)
    for i, seq in enumerate(seqs):
        try:
            padded[i, :seq.shape[0]] = seq
        except RuntimeError as err:
            raise ValueError(f"sequence {i} does not fit: {err}") from None
    return padded, lengths


def pad_one_hot(sequence: torch.Tensor, target_length: int) -> torch.Tensor:
    """``sequence`` (T, C) followed by ``target_length - T`` zero rows."""
    extra = target_length - sequence.shape[0]
    if extra < 0:
        raise ValueError(f"target_length {target_length} is shorter than the sequence "
                         f"({sequence.shape[0]} steps)")
    return F.pad(sequence, (0, 0, 0, extra))
