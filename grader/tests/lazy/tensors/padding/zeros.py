"""Do-nothing: zero tensors of the right shapes and dtypes ((B, T_max, *rest) and int64
lengths; (target_length, C))."""

import torch


def pad_sequences(seqs, padding_value=0.0):
    t_max = max(len(s) for s in seqs)
    padded = torch.zeros(len(seqs), t_max, *seqs[0].shape[1:], dtype=seqs[0].dtype)
    return padded, torch.zeros(len(seqs), dtype=torch.int64)


def pad_one_hot(sequence, target_length):
    return torch.zeros(target_length, sequence.shape[1], dtype=sequence.dtype)
