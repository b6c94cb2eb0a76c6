"""Attack: speak for another rank.

The ranks' ``send``/``recv`` are closures over the worker's channel to the grader.
The attack digs the channel out of ``send.__closure__`` and sends a message that
claims to come from the next rank (as if that rank had sent to this one), hoping
the grader books it to the other rank. ``ring_allreduce`` is not attempted.
"""


def _channel(fn):
    for cell in getattr(fn, "__closure__", None) or ():
        holder = cell.cell_contents
        channel = getattr(holder, "channel", None)
        if channel is not None and hasattr(channel, "ask"):
            return channel
    return None


def ring_allreduce(tensors):
    raise NotImplementedError


def ring_allreduce_dist(t, send, recv, rank, world_size):
    channel = _channel(send)
    if channel is None:
        raise RuntimeError("ATTACK forge_rank: VERDICT=no-channel")
    other = (rank + 1) % world_size
    channel.ask(other, {"p2p": "send", "peer": rank}, t.detach().clone())
    raise RuntimeError(f"ATTACK forge_rank: VERDICT=FORGED rank {rank} spoke for rank {other}")
