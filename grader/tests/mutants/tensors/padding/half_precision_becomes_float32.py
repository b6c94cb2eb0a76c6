"""Mistake: allocates the padded batch in the default float dtype for every floating
input, so float16 and bfloat16 sequences come back as float32."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ('test_matches_pad_sequence_batch_first',)


def pad_sequences(seqs: list[torch.Tensor],
                  padding_value: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Batch-first ``(B, T_max, *rest)`` padding of ``seqs`` and their int64 CPU lengths."""
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence")
    rest = seqs[0].shape[1:]
    for i, seq in enumerate(seqs):
        if seq.shape[1:] != rest:
            raise ValueError(f"sequence {i} has trailing dims {tuple(seq.shape[1:])}, "
                             f"sequence 0 has {tuple(rest)}")
    lengths = torch.tensor([seq.shape[0] for seq in seqs], dtype=torch.int64)
    t_max = int(lengths.max())
    padded = torch.full((len(seqs), t_max, *rest), padding_value,
                        dtype=torch.get_default_dtype() if seqs[0].is_floating_point()
                        and seqs[0].dtype != torch.float64 else seqs[0].dtype,
                        device=seqs[0].device)
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
