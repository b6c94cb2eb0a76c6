"""Do-nothing: the right message schedule with no arithmetic. ring_allreduce logs the standard
ring's 2(p-1) steps (computed from p alone) and returns copies of its input chunks;
ring_allreduce_dist exchanges the standard chunks with its neighbours (even ranks send
first) but receives into scratch buffers and throws them away, so t is never summed."""

import torch


def ring_allreduce(chunks):
    p = len(chunks)
    log = []
    for s in range(p - 1):
        log += [(s, r, (r + 1) % p, (r - s) % p) for r in range(p)]
    for s in range(p - 1):
        log += [(p - 1 + s, r, (r + 1) % p, (r + 1 - s) % p) for r in range(p)]
    return [[c.clone() for c in rank] for rank in chunks], log


def ring_allreduce_dist(t, send, recv, rank, world_size):
    p = world_size
    parts = t.view(-1).tensor_split(p)
    right, left = (rank + 1) % p, (rank - 1) % p
    for s in range(2 * (p - 1)):
        out = parts[(rank - s) % p] if s < p - 1 else parts[(rank + 1 - s + p - 1) % p]
        incoming = parts[(left - s) % p] if s < p - 1 else parts[(left + 1 - s + p - 1) % p]
        scratch = torch.empty_like(incoming)
        if rank % 2 == 0:
            send(out.clone(), right)
            recv(scratch, left)
        else:
            recv(scratch, left)
            send(out.clone(), right)
    return t
