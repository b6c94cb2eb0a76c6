"""Ring all-reduce: how NCCL and Horovod sum gradients over many GPUs.

All-reduce leaves the elementwise sum of every rank's tensor on every rank. The
ring way arranges the ``p`` ranks in a circle (rank ``r`` talks only to its right
neighbour ``(r + 1) % p`` and hears only from its left one ``(r - 1) % p``) and
splits every rank's tensor into ``p`` chunks. Then, in ``2 * (p - 1)`` steps where
every rank sends exactly one chunk to its right neighbour:

- scatter-reduce (the first ``p - 1`` steps): the receiver *adds* the chunk it
  gets to its own copy of that chunk. Afterwards rank ``r`` holds the full sum
  of one chunk, chunk ``(r + 1) % p``.
- all-gather (the last ``p - 1`` steps): the fully summed chunks travel round
  the ring and the receiver *overwrites* its copy.

Each rank sends ``2 * (p - 1)`` chunks of ``n / p`` elements: ``2 * (p - 1) / p``
of its tensor, under twice the tensor whatever ``p``. Sending the whole tensor to
everyone would cost ``(p - 1)`` whole tensors per rank; that is why the ring wins.

First simulate the algorithm on plain lists (``ring_allreduce``), then run it for
real with point-to-point ``send``/``recv`` (``ring_allreduce_dist``).
"""

from collections.abc import Callable

import torch

Message = tuple[int, int, int, int]  # (step, src, dst, chunk id)
PointToPoint = Callable[[torch.Tensor, int], object]  # send(tensor, dst) / recv(tensor, src)


def ring_allreduce(
    chunks: list[list[torch.Tensor]],
) -> tuple[list[list[torch.Tensor]], list[Message]]:
    """Simulate a ring all-reduce of ``p`` ranks; return every rank's chunks and the log.

    Spec:
        - ``chunks[r][c]`` is chunk ``c`` of rank ``r``'s tensor: ``p >= 1`` ranks,
          each with exactly ``p`` chunks. Chunk ``c`` has the same shape and dtype
          on every rank (different chunk ids may differ in size, even be empty).
        - Return ``(results, log)``:
            * ``results[r][c]``: what rank ``r`` holds for chunk ``c`` at the end,
              which must be the sum over ranks, ``chunks[0][c] + ... +
              chunks[p-1][c]`` (a list of ``p`` lists of ``p`` tensors);
            * ``log``: one tuple ``(step, src, dst, chunk_id)`` of Python ints per
              message sent, in step order. Steps are numbered ``0`` to
              ``2 * (p - 1) - 1``; steps ``0 .. p-2`` are the scatter-reduce,
              steps ``p-1 .. 2p-3`` the all-gather.
        - In every step every rank sends exactly one chunk, to its right
          neighbour ``(src + 1) % p``. All the sends of a step happen at the same
          time: a rank sends the value it held at the start of the step.
        - Leave ``chunks`` unchanged: work on clones. Every tensor in ``results`` is a
          new one, never one of the caller's tensors or a view of one (with ``p == 1``
          too, where nothing is sent: return copies).

    The standard schedule (the tests accept any correct ring, but this one is
    what everyone uses): in scatter-reduce step ``s`` rank ``r`` sends chunk
    ``(r - s) % p`` and the receiver adds it into its copy; in all-gather step
    ``s`` (``s = 0 .. p-2``, logged as step ``p - 1 + s``) rank ``r`` sends chunk
    ``(r + 1 - s) % p`` and the receiver replaces its copy with it.

    Example (two ranks, two one-element chunks each):
        >>> results, log = ring_allreduce([[torch.tensor([1.]), torch.tensor([2.])],
        ...                                [torch.tensor([10.]), torch.tensor([20.])]])
        >>> results
        [[tensor([11.]), tensor([22.])], [tensor([11.]), tensor([22.])]]
        >>> log
        [(0, 0, 1, 0), (0, 1, 0, 1), (1, 0, 1, 1), (1, 1, 0, 0)]

        Step 0: rank 0 sends chunk 0 (1) to rank 1, which now holds 11; rank 1
        sends chunk 1 (20) to rank 0, which now holds 22. Step 1: each passes
        its finished chunk on, and the receiver overwrites.

    Pitfalls:
        - Scatter-reduce adds, all-gather overwrites: adding in the all-gather
          counts chunks twice.
        - An off-by-one in the all-gather chunk index sends a chunk that is
          not fully summed yet; some ranks end with partial sums.
        - ``state = chunks`` then ``state[r][c] += ...`` writes into the
          caller's tensors: clone first.
        - With ``p == 1`` there is nothing to send: the log is empty and the
          result is a copy of the input.
    """
    raise NotImplementedError


def ring_allreduce_dist(t: torch.Tensor, send: PointToPoint, recv: PointToPoint, rank: int,
                        world_size: int) -> torch.Tensor:
    """Sum ``t`` over all ranks in place with a ring, using only ``send`` and ``recv``.

    Spec:
        - Every rank calls this at the same time with its own ``t``: a contiguous
          tensor with the same shape and dtype on every rank (any shape; it may
          have fewer elements than there are ranks, even none).
        - ``send(tensor, dst)`` and ``recv(tensor, src)`` work like
          ``torch.distributed.send`` / ``recv``: ``send`` ships a contiguous
          tensor to rank ``dst``; ``recv`` fills a contiguous tensor of the same
          dtype and number of elements with what rank ``src`` sent. Both
          *block*: ``send`` returns only once ``dst`` has received it.
        - On return ``t`` holds the elementwise sum over all ranks (in place,
          like ``torch.distributed.all_reduce``); return ``t``.
        - Chunks: ``t.view(-1).tensor_split(world_size)``, views of ``t``'s
          memory. Run the schedule of ``ring_allreduce``: ``2 * (world_size - 1)``
          steps, in each of which this rank sends exactly one chunk to
          ``(rank + 1) % world_size`` and receives one from
          ``(rank - 1) % world_size``. No other messages.

    Running it for real (what the grader does on gloo ranks):
        dist.init_process_group("gloo", ...)
        ring_allreduce_dist(t, dist.send, dist.recv, dist.get_rank(), dist.get_world_size())

    Example (two ranks):
        rank 0: t = tensor([1., 2.])      rank 1: t = tensor([10., 20.])
        after the call both hold tensor([11., 22.]); each rank sent two
        one-element chunks to the other.

    How: in a scatter-reduce step, receive into a scratch buffer
    (``torch.empty_like`` the incoming chunk) and add it to the chunk; in an
    all-gather step receive straight into the chunk's view (that writes into
    ``t``).

    Pitfalls:
        - Deadlock: with blocking sends, if every rank sends first, every rank
          waits for a receiver that is itself stuck sending. Alternate: even
          ranks send then receive, odd ranks receive then send (this works for
          odd world sizes too). The grader's in-memory send/recv blocks the
          same way and reports who waits for whom.
        - ``t.chunk(p)`` may return fewer than ``p`` chunks
          (``torch.arange(4).chunk(3)`` gives 2 chunks of 2); ``tensor_split``
          always gives ``p``, some of them empty.
        - Scatter-reduce must add what arrives; receiving straight into the
          chunk there overwrites your own contribution.
        - ``send``/``recv`` need contiguous tensors: slices of the flat 1-D view
          are, a slice of a 2-D tensor along dim 1 is not.
    """
    raise NotImplementedError
