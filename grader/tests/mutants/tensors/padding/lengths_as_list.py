"""Mistake: returns the lengths as a Python list instead of an int64 tensor."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_lengths_are_int64_on_cpu",)


def pad_sequences(seqs, padding_value=0.0):
    if not seqs:
        raise ValueError("no sequences")
    rest = seqs[0].shape[1:]
    if any(s.shape[1:] != rest for s in seqs):
        raise ValueError("trailing dims differ")
    lengths = [s.shape[0] for s in seqs]
    padded = torch.full((len(seqs), max(lengths), *rest), padding_value,
                        dtype=seqs[0].dtype, device=seqs[0].device)
    for i, s in enumerate(seqs):
        padded[i, :s.shape[0]] = s
    return padded, lengths


def pad_one_hot(sequence, target_length):
    extra = target_length - sequence.shape[0]
    if extra < 0:
        raise ValueError("target_length is shorter than the sequence")
    return F.pad(sequence, (0, 0, 0, extra))
