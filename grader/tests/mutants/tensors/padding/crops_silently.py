"""Mistake: no check on the padding amount: F.pad with a negative amount crops the
sequence without any error, so a too-short target_length drops time steps."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_pad_one_hot_raises_when_target_is_shorter",)


def pad_sequences(seqs, padding_value=0.0):
    if not seqs:
        raise ValueError("no sequences")
    rest = seqs[0].shape[1:]
    if any(s.shape[1:] != rest for s in seqs):
        raise ValueError("trailing dims differ")
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.int64)
    padded = torch.full((len(seqs), int(lengths.max()), *rest), padding_value,
                        dtype=seqs[0].dtype, device=seqs[0].device)
    for i, s in enumerate(seqs):
        padded[i, :s.shape[0]] = s
    return padded, lengths


def pad_one_hot(sequence, target_length):
    return F.pad(sequence, (0, 0, 0, target_length - sequence.shape[0]))
