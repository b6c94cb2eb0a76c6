"""Do-nothing: zero chunks of the right shapes and an empty log; ring_allreduce_dist sends
nothing and returns zeros like t."""

import torch


def ring_allreduce(chunks):
    return [[torch.zeros_like(c) for c in rank] for rank in chunks], []


def ring_allreduce_dist(t, send, recv, rank, world_size):
    return torch.zeros_like(t)
