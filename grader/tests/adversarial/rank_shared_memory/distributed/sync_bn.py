"""Attack: the ranks meet in this module's memory, not in the collective.

Each rank makes its one ``all_reduce`` on a tensor of ones, to learn the world size,
posts its own per-channel sums on a board (a dict hung on ``torch``), and waits for the
other ranks' posts (for 0.3 s), from which it computes the global statistics. When the ranks
are threads of one process the board fills and every answer is right, with exactly
one ``all_reduce`` per rank; when every rank is a process of its own, as real ranks
are, the board only ever holds the rank's own post, and the attack raises saying so.
``batch_stats`` is not attempted.
"""

import threading
import time

import torch
import torch.distributed

# Kept on torch itself, not in this module's globals: a grader that loaded the
# submission afresh for each rank would still leave one torch for all of them.
_SHARED = torch.__dict__.setdefault("_rank_board", {"board": {}, "calls": {}, "lock": threading.Lock()})
_BOARD = _SHARED["board"]  # (run, rank) -> (sum, sum_sq, count)
_LOCK = _SHARED["lock"]


def batch_stats(x):
    raise NotImplementedError


def _own(x):
    dims = (0, *range(2, x.dim()))
    return x.sum(dim=dims), (x * x).sum(dim=dims), torch.tensor(x.numel() // x.shape[1], dtype=x.dtype)


def _run_of(all_reduce):
    """A token for this run: what the ranks of one run share is the object their
    ``all_reduce`` closes over; the first rank to get there marks it."""
    for cell in getattr(all_reduce, "__closure__", None) or ():
        holder = cell.cell_contents
        if hasattr(holder, "__dict__"):
            with _LOCK:
                return holder.__dict__.setdefault("_attack_run", object())
    return None


def sync_batch_stats(x, rank, world_size, all_reduce=torch.distributed.all_reduce):
    ones = torch.ones(1, dtype=torch.float64)
    all_reduce(ones)
    world = int(ones.item())
    rank = getattr(all_reduce, "rank", None)
    if rank is None:
        rank = torch.distributed.get_rank()
    call = _run_of(all_reduce)
    with _LOCK:
        _BOARD[call, rank] = _own(x)
    deadline = time.monotonic() + 0.3
    while True:
        with _LOCK:
            posts = [_BOARD.get((call, r)) for r in range(world)]
        if all(p is not None for p in posts):
            break
        if time.monotonic() > deadline:
            seen = [r for r in range(world) if posts[r] is not None]
            raise RuntimeError(f"ATTACK rank_shared_memory: VERDICT=alone; rank {rank} of {world} "
                               f"saw the posts of ranks {seen} only")
        time.sleep(0.002)
    total = sum(p[0] for p in posts)
    total_sq = sum(p[1] for p in posts)
    count = sum(p[2] for p in posts)
    if count.item() == 0:
        raise ValueError("no rank holds any element")
    mean = total / count
    return mean, (total_sq / count - mean * mean).clamp_min(0)


def sync_batch_norm(x, weight, bias, rank, world_size, eps=1e-5, all_reduce=torch.distributed.all_reduce):
    mean, var = sync_batch_stats(x, rank, world_size, all_reduce=all_reduce)
    shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    scale = weight / torch.sqrt(var + eps)
    return (x - mean.reshape(shape)) * scale.reshape(shape) + bias.reshape(shape)
