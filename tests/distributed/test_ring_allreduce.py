"""Ring all-reduce: scatter-reduce then all-gather in 2(p-1) steps to the right neighbour, simulated and over send/recv."""

import math
from collections import defaultdict

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same
from tests.properties import assert_arguments_unchanged, assert_no_shared_memory, assert_ordinary
from tests.strategies import float_tensors, int_tensors, shapes

pytestmark = pytest.mark.exercise(points=15, mutates={"ring_allreduce_dist": ("tensors",)})

DTYPES = [torch.float64, torch.int64]


# ------------------------------------------------------------------ strategies

def _values(shape, dtype: torch.dtype) -> st.SearchStrategy[torch.Tensor]:
    if dtype == torch.int64:
        return int_tensors(shape, -20, 20)
    return float_tensors(shape, dtype=dtype)


@st.composite
def rank_chunks(draw, max_world: int = 4, equal_sizes: bool = False) -> list[list[torch.Tensor]]:
    """``chunks[r][c]`` for 1 to ``max_world`` ranks: chunk c has one shape on every rank."""
    world = draw(st.integers(1, max_world), label="ranks p")
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    if equal_sizes:
        side = draw(st.integers(1, 3), label="chunk size")
        chunk_shapes = [(side,)] * world
    else:
        chunk_shapes = draw(st.lists(shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
                                     min_size=world, max_size=world), label="shape of each chunk")
    sizes = [math.prod(shape) for shape in chunk_shapes]
    flats = [draw(_values((sum(sizes),), dtype), label=f"rank {r}'s chunks, flat")
             for r in range(world)]
    return [[part.reshape(shape) for part, shape in zip(flat.split(sizes), chunk_shapes)]
            for flat in flats]


@st.composite
def rank_tensors(draw, max_world: int = 4) -> list[torch.Tensor]:
    """One contiguous tensor per rank (same shape and dtype; may hold fewer elements than
    there are ranks, or none)."""
    world = draw(st.integers(1, max_world), label="world_size")
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    shape = draw(shapes(min_dims=0, max_dims=2, min_side=0, max_side=5), label="shape")
    return [draw(_values(shape, dtype), label=f"rank {r} t") for r in range(world)]


def _chunk_sums(chunks: list[list[torch.Tensor]]) -> list[torch.Tensor]:
    return [torch.stack([rank[c] for rank in chunks]).sum(dim=0) for c in range(len(chunks))]


def _world_note(chunks: list) -> str:
    return f"{len(chunks)} rank(s)"


# ------------------------------------------------------------------ the simulation

def _simulate(impl, chunks: list[list[torch.Tensor]], args=None):
    got = impl.ring_allreduce([[c.clone() for c in rank] for rank in chunks] if args is None else args)
    assert isinstance(got, tuple) and len(got) == 2, (
        f"ring_allreduce should return a tuple (results, log), got {type(got).__name__}")
    return got


def _check_results(results, chunks: list[list[torch.Tensor]]) -> None:
    """Every rank ends with every chunk summed over the ranks (the oracle comparison that
    rides along with the log, traffic and no-mutation checks)."""
    expected = _chunk_sums(chunks)
    assert isinstance(results, list) and len(results) == len(chunks), (
        f"results should be a list with one entry per rank ({len(chunks)}), got {results!r}")
    for rank, got in enumerate(results):
        assert_same(got, expected, what=f"(rank {rank} of {_world_note(chunks)}; every chunk "
                                        f"must end summed over the ranks) results[{rank}]")


def _checked_log(log, p: int) -> list[tuple[int, int, int, int]]:
    """The log as 4-tuples of ints in range, or a clear failure."""
    assert isinstance(log, list), f"the log should be a list of tuples, got {type(log).__name__}"
    for entry in log:
        assert (type(entry) is tuple and len(entry) == 4
                and all(type(v) is int for v in entry)), (
            f"log entry {entry!r}: expected a tuple (step, src, dst, chunk_id) of 4 Python ints")
        step, src, dst, chunk = entry
        assert 0 <= src < p and 0 <= dst < p and 0 <= chunk < p, (
            f"log entry {entry!r}: src, dst and chunk_id must be in 0..{p - 1} with {p} rank(s)")
    return log


# The spec's example: two ranks, two one-element chunks each.
SPEC_CHUNKS = [[torch.tensor([1.0]), torch.tensor([2.0])], [torch.tensor([10.0]), torch.tensor([20.0])]]


@pytest.mark.weight(3)
@settings(max_examples=30)
@example(SPEC_CHUNKS)
@given(rank_chunks())
def test_every_rank_ends_with_the_sum(impl, chunks):
    results, _ = _simulate(impl, chunks)
    _check_results(results, chunks)


@pytest.mark.weight(2)
@settings(max_examples=25)
@example(SPEC_CHUNKS)
@given(rank_chunks())
def test_log_is_2p_minus_2_steps_of_one_chunk_to_the_right(impl, chunks):
    p = len(chunks)
    results, log = _simulate(impl, chunks)
    log = _checked_log(log, p)
    steps = [entry[0] for entry in log]
    assert steps == sorted(steps), f"the log must be in step order, got steps {steps}"
    assert sorted(set(steps)) == list(range(2 * (p - 1))), (
        f"with p={p} there are 2(p-1) = {2 * (p - 1)} steps numbered 0..{2 * p - 3}; "
        f"the log has steps {sorted(set(steps))}")
    for step in range(2 * (p - 1)):
        messages = [(src, dst) for s, src, dst, _ in log if s == step]
        expected = [(r, (r + 1) % p) for r in range(p)]
        assert sorted(messages) == expected, (
            f"step {step}: every rank sends exactly one chunk, to its right neighbour "
            f"(src, dst) = {expected}; the log has {sorted(messages)}")
    _check_results(results, chunks)


def _replay(chunks: list[list[torch.Tensor]], log) -> list[list[torch.Tensor]]:
    """What the ranks hold after the logged messages: all of a step's messages carry the
    values held at the start of the step; scatter-reduce steps add, all-gather steps
    overwrite."""
    p = len(chunks)
    state = [[c.clone() for c in rank] for rank in chunks]
    by_step = defaultdict(list)
    for step, src, dst, chunk in log:
        assert 0 <= step < 2 * (p - 1), f"log step {step} is outside 0..{2 * p - 3} (p={p})"
        by_step[step].append((src, dst, chunk))
    for step in sorted(by_step):
        payloads = [state[src][chunk].clone() for src, _, chunk in by_step[step]]
        for (src, dst, chunk), payload in zip(by_step[step], payloads):
            state[dst][chunk] = state[dst][chunk] + payload if step < p - 1 else payload
    return state


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(rank_chunks())
def test_replaying_the_log_gives_every_rank_the_sum(impl, chunks):
    p = len(chunks)
    results, log = _simulate(impl, chunks)
    log = _checked_log(log, p)
    expected = _chunk_sums(chunks)
    for rank, got in enumerate(_replay(chunks, log)):
        assert_same(got, expected, what=(
            f"(replaying your log on the inputs, {_world_note(chunks)}: steps 0..{p - 2} add "
            f"the chunk sent, steps {p - 1}..{2 * p - 3} overwrite with it) rank {rank}'s chunks"))
    _check_results(results, chunks)


@settings(max_examples=20)
@given(rank_chunks(equal_sizes=True))
def test_each_rank_sends_2_p_minus_1_over_p_of_its_tensor(impl, chunks):
    p = len(chunks)
    results, log = _simulate(impl, chunks)
    log = _checked_log(log, p)
    total = sum(c.numel() for c in chunks[0])
    for rank in range(p):
        sent = sum(chunks[rank][c].numel() for _, src, _, c in log if src == rank)
        assert sent * p == 2 * (p - 1) * total, (
            f"rank {rank} sent {sent} element(s) of its {total}; a ring sends 2(p-1)/p of the "
            f"tensor = {2 * (p - 1) * total // p} with p={p} (one chunk per step)")
    _check_results(results, chunks)


@settings(max_examples=15)
@given(rank_chunks())
def test_inputs_unchanged(impl, chunks):
    """The inputs keep their values, and no result is an input tensor or a view of one (with
    p == 1 too: the result is a copy); the results are the sums."""
    args = [[c.clone() for c in rank] for rank in chunks]
    results, _ = _simulate(impl, chunks, args)
    assert_arguments_unchanged(impl, what="the chunks after the call (clone before you add)")
    for rank, (got, original) in enumerate(zip(args, chunks)):
        assert_same(got, original, what=f"chunks[{rank}] after the call (clone before you add)")
    assert_ordinary(lambda: _check_results(results, chunks))
    inputs = [c for rank in args for c in rank]
    for rank, held in enumerate(results):
        for c, t in enumerate(held):
            assert_no_shared_memory(t, *inputs, what=f"results[{rank}][{c}] (clone the chunks: "
                                                     "the caller's tensors are not results)")


# ------------------------------------------------------------------ over send / recv

def _total(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack(tensors).sum(dim=0)


def _dist_note(tensors: list[torch.Tensor]) -> str:
    t = tensors[0]
    return f"world_size {len(tensors)}, t of shape {tuple(t.shape)} ({t.numel()} element(s))"


def _check_dist_results(run, tensors: list[torch.Tensor]) -> None:
    """What every rank returned is the sum (rides along with the message checks)."""
    expected = _total(tensors)
    for rank, got in enumerate(run.results):
        assert_same(got, expected, what=f"what rank {rank} returned ({_dist_note(tensors)})")


@pytest.mark.weight(3)
@settings(max_examples=30)
@given(rank_tensors())
def test_dist_every_rank_returns_the_sum(impl, tensors):
    _check_dist_results(impl.run_p2p_ranks("ring_allreduce_dist", [(t.clone(),) for t in tensors]),
                        tensors)


@settings(max_examples=15)
@given(rank_tensors())
def test_dist_sums_in_place(impl, tensors):
    args = [(t.clone(),) for t in tensors]
    impl.run_p2p_ranks("ring_allreduce_dist", args)
    expected = _total(tensors)
    for rank, (t,) in enumerate(args):
        assert_same(t, expected, what=f"rank {rank}'s t after the call ({_dist_note(tensors)}): "
                                      "it must hold the sum, like dist.all_reduce")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(rank_tensors())
def test_dist_sends_2p_minus_2_messages_to_the_right_neighbour(impl, tensors):
    p = len(tensors)
    run = impl.run_p2p_ranks("ring_allreduce_dist", [(t.clone(),) for t in tensors])
    for rank, sent in enumerate(run.sent):
        right = (rank + 1) % p
        destinations = [dst for dst, _ in sent]
        assert destinations == [right] * (2 * (p - 1)), (
            f"rank {rank} ({_dist_note(tensors)}) sent to ranks {destinations}; a ring rank "
            f"sends 2(p-1) = {2 * (p - 1)} messages, all to its right neighbour {right}")
    _check_dist_results(run, tensors)


@settings(max_examples=20)
@given(rank_tensors())
def test_dist_traffic_is_2_p_minus_1_times_the_tensor(impl, tensors):
    p, n = len(tensors), tensors[0].numel()
    run = impl.run_p2p_ranks("ring_allreduce_dist", [(t.clone(),) for t in tensors])
    sizes = [numel for sent in run.sent for _, numel in sent]
    largest = math.ceil(n / p)
    assert all(s <= largest for s in sizes) and sum(sizes) == 2 * (p - 1) * n, (
        f"{_dist_note(tensors)}: the ranks sent messages of {sizes} element(s), "
        f"{sum(sizes)} in all; a ring sends one chunk of at most ceil(n/p) = {largest} per "
        f"message and 2(p-1)·n = {2 * (p - 1) * n} in all")
    _check_dist_results(run, tensors)


# ------------------------------------------------------------------ real gloo processes

@pytest.mark.distributed
@pytest.mark.weight(2)
def test_gloo_processes_sum_with_dist_send_and_recv(impl):
    # 3 ranks (an odd ring) and 7 elements (chunks of 3, 2 and 2): one case, as real
    # processes are slow to start.
    world = 3
    gen = torch.Generator().manual_seed(world)
    tensors = [torch.randn(7, dtype=torch.float64, generator=gen) for _ in range(world)]
    # A rehearsal with the in-memory send/recv first: their blocking is gloo's, and a
    # schedule that deadlocks there would hang the real processes for a minute.
    impl.run_p2p_ranks("ring_allreduce_dist", [(t.clone(),) for t in tensors])
    results = impl.run_gloo("ring_allreduce_dist", [(t,) for t in tensors], p2p=True)
    expected = _total(tensors)
    for rank, got in enumerate(results):
        assert_same(got, expected, what=f"what gloo rank {rank} of {world} returned "
                                        "(send=dist.send, recv=dist.recv)")


# ------------------------------------------------------------------ GPU

def check_simulation_on_device(ring_allreduce, chunks: list[list[torch.Tensor]], device: str) -> None:
    """float32 chunks on ``device`` against the float64 CPU sum: the results stay on the
    device, in float32."""
    on_device = [[c.to(device, torch.float32) for c in rank] for rank in chunks]
    results, _ = ring_allreduce(on_device)
    expected = _chunk_sums([[c.float().double() for c in rank] for rank in chunks])
    for rank, got in enumerate(results):
        for c, (g, e) in enumerate(zip(got, expected)):
            assert isinstance(g, torch.Tensor) and g.device.type == device, (
                f"results[{rank}][{c}] is on {getattr(g, 'device', None)}, expected {device}")
            assert_same(g.cpu(), e.float(), what=f"results[{rank}][{c}] in float32 on {device}",
                        rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
@settings(max_examples=15)
@given(rank_chunks())
def test_float32_on_gpu_stays_there_and_sums(impl, chunks):
    check_simulation_on_device(impl.ring_allreduce, chunks, "cuda")
