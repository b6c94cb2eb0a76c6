"""Mistake: compares only the last trailing dim of the sequences, so (T, 2, 3) and (T, 4, 3)
(or a different number of trailing dims) pass the check and fail later, or not at all."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_different_trailing_dims_raise_value_error',)


def pad_sequences(seqs: list[torch.Tensor],
                  padding_value: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch-first ``(B, T_max, *rest)`` padding of ``seqs`` and their int64 CPU lengths."""
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence")
    rest = seqs[0].shape[1:]
    for i, seq in enumerate(seqs):
        if seq.dim() > 1 and len(rest) and seq.shape[-1] != rest[-1]:
            raise ValueError(f"sequence {i} has trailing dims {tuple(seq.shape[1:])}, "
                             f"sequence 0 has {tuple(rest)}")
    lengths = torch.tensor([seq.shape[0] for seq in seqs], dtype=torch.int64)
    t_max = int(lengths.max())
    padded = torch.full((len(seqs), t_max, *rest), padding_value,
                        dtype=seqs[0].dtype, device=seqs[0].device)
    for i, seq in enumerate(seqs):
        padded[i, :seq.shape[0]] = seq
    return padded, lengths


def pad_one_hot(sequence: torch.Tensor, target_length: int) -> torch.Tensor:
    """``sequence`` (T, C) followed by ``target_length - T`` zero rows."""
    extra = target_length - sequence.shape[0]
    if extra < 0:
        raise ValueError(f"target_length {target_length} is shorter than the sequence "
                         f"({sequence.shape[0]} steps)")
    return F.pad(sequence, (0, 0, 0, extra))
