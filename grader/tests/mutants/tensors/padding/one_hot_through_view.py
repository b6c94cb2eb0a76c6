"""Mistake: pad_one_hot flattens the sequence with ``view(-1)``, appends the zeros and
views the result back as (target_length, C): a transposed or sliced sequence makes
``view`` raise."""

import torch

CAUGHT_BY = ('test_pad_one_hot_appends_zero_rows',)


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
    flat = torch.cat([sequence.view(-1), sequence.new_zeros(extra * sequence.shape[1])])
    return flat.view(target_length, sequence.shape[1])
