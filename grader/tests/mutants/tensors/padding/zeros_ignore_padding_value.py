"""Mistake: starts from torch.zeros, so the padding is always 0 whatever padding_value says."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_matches_pad_sequence_batch_first",)


def pad_sequences(seqs, padding_value=0.0):
    if not seqs:
        raise ValueError("no sequences")
    rest = seqs[0].shape[1:]
    if any(s.shape[1:] != rest for s in seqs):
        raise ValueError("trailing dims differ")
    lengths = torch.tensor([s.shape[0] for s in seqs], dtype=torch.int64)
    padded = torch.zeros((len(seqs), int(lengths.max()), *rest),
                         dtype=seqs[0].dtype, device=seqs[0].device)
    for i, s in enumerate(seqs):
        padded[i, :s.shape[0]] = s
    return padded, lengths


def pad_one_hot(sequence, target_length):
    extra = target_length - sequence.shape[0]
    if extra < 0:
        raise ValueError("target_length is shorter than the sequence")
    return F.pad(sequence, (0, 0, 0, extra))
