"""Mistake: pads time-first, (T_max, B, *rest), as pad_sequence does by default."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_matches_pad_sequence_batch_first",
             "test_default_padding_is_zero_and_keeps_integer_dtype")


def pad_sequences(seqs, padding_value=0.0):
    if not seqs:
        raise ValueError("no sequences")
    rest = seqs[0].shape[1:]
    if any(s.shape[1:] != rest for s in seqs):
        raise ValueError("trailing dims differ")
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.int64)
    padded = torch.full((int(lengths.max()), len(seqs), *rest), padding_value,
                        dtype=seqs[0].dtype, device=seqs[0].device)
    for i, s in enumerate(seqs):
        padded[:s.shape[0], i] = s
    return padded, lengths


def pad_one_hot(sequence, target_length):
    extra = target_length - sequence.shape[0]
    if extra < 0:
        raise ValueError("target_length is shorter than the sequence")
    return F.pad(sequence, (0, 0, 0, extra))
