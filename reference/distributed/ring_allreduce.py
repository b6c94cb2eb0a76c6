"""Reference solution: ring all-reduce, simulated and with real send/recv."""

from collections.abc import Callable

import torch

Message = tuple[int, int, int, int]  # (step, src, dst, chunk id)
PointToPoint = Callable[[torch.Tensor, int], object]  # send(tensor, dst) / recv(tensor, src)


def _scatter_reduce_chunk(rank: int, step: int, p: int) -> int:
    return (rank - step) % p


def _all_gather_chunk(rank: int, step: int, p: int) -> int:
    return (rank + 1 - step) % p


def _deliver(state: list[list[torch.Tensor]], step: int, chunk_of: Callable[[int], int],
             add: bool, log: list[Message]) -> None:
    """One step: every rank r sends chunk_of(r) to r + 1, all at once."""
    p = len(state)
    payloads = [state[r][chunk_of(r)].clone() for r in range(p)]  # values at the step's start
    for src, payload in enumerate(payloads):
        dst, chunk = (src + 1) % p, chunk_of(src)
        state[dst][chunk] = state[dst][chunk] + payload if add else payload
        log.append((step, src, dst, chunk))


def ring_allreduce(
    chunks: list[list[torch.Tensor]],
) -> tuple[list[list[torch.Tensor]], list[Message]]:
    """Scatter-reduce (p - 1 steps, add) then all-gather (p - 1 steps, overwrite)."""
    p = len(chunks)
    state = [[c.clone() for c in rank_chunks] for rank_chunks in chunks]
    log: list[Message] = []
    for s in range(p - 1):
        _deliver(state, s, lambda r, s=s: _scatter_reduce_chunk(r, s, p), add=True, log=log)
    for s in range(p - 1):
        _deliver(state, p - 1 + s, lambda r, s=s: _all_gather_chunk(r, s, p), add=False, log=log)
    return state, log


def _exchange(outgoing: torch.Tensor, incoming: torch.Tensor, send: PointToPoint,
              recv: PointToPoint, rank: int, world_size: int) -> None:
    """Send right and receive from the left; even ranks send first, odd ranks receive
    first, so blocking sends never wait on each other in a circle."""
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    if rank % 2 == 0:
        send(outgoing, right)
        recv(incoming, left)
    else:
        recv(incoming, left)
        send(outgoing, right)


def ring_allreduce_dist(t: torch.Tensor, send: PointToPoint, recv: PointToPoint, rank: int,
                        world_size: int) -> torch.Tensor:
    """Ring all-reduce of ``t`` in place over chunk views of ``t.view(-1)``."""
    p = world_size
    chunks = t.view(-1).tensor_split(p)
    for s in range(p - 1):
        incoming = chunks[_scatter_reduce_chunk(rank - 1, s, p)]
        buffer = torch.empty_like(incoming)
        _exchange(chunks[_scatter_reduce_chunk(rank, s, p)], buffer, send, recv, rank, p)
        incoming.add_(buffer)
    for s in range(p - 1):
        _exchange(chunks[_all_gather_chunk(rank, s, p)], chunks[_all_gather_chunk(rank - 1, s, p)],
                  send, recv, rank, p)
    return t
