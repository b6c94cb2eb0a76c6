"""An independent correct padding: stack after padding each sequence with torch.cat."""

import torch


def pad_sequences(seqs, padding_value=0.0):
    if not seqs:
        raise ValueError("no sequences to pad")
    tail = tuple(seqs[0].shape[1:])
    if any(tuple(s.shape[1:]) != tail for s in seqs):
        raise ValueError("the sequences' trailing dimensions differ")
    longest = max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        filler = torch.full((longest - s.shape[0], *tail), padding_value, dtype=s.dtype, device=s.device)
        rows.append(torch.cat([s, filler], dim=0))
    return torch.stack(rows), torch.tensor([s.shape[0] for s in seqs], dtype=torch.int64)


def pad_one_hot(sequence, target_length):
    missing = target_length - sequence.shape[0]
    if missing < 0:
        raise ValueError("the sequence is longer than target_length")
    zeros = sequence.new_zeros((missing, sequence.shape[1]))
    return torch.cat([sequence, zeros], dim=0)
