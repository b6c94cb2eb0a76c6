"""Which items of a stream each DataLoader worker of each rank reads, and the batches the rank's
DataLoader yields, against DataLoader itself over the spec's ShardedStream. Each property judges
its own claim: "read exactly once" and the error cases hold for any numbering of the readers
(webdataset's split_by_node then split_by_worker numbers them otherwise, and reads every item
once), whose anchors are numbering-free."""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch.utils.data import DataLoader, IterableDataset, get_worker_info
from torch.utils.data._utils import worker as _worker

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_no_shared_memory

pytestmark = pytest.mark.exercise(points=10)


class ShardedStream(IterableDataset):
    """The spec's stream: reader rank * workers + worker_id reads every
    (world_size * workers)-th item from its position."""

    def __init__(self, items: list[int], rank: int = 0, world_size: int = 1):
        self.items, self.rank, self.world_size = items, rank, world_size

    def __iter__(self) -> Iterator[int]:
        info = get_worker_info()
        workers, worker_id = (1, 0) if info is None else (info.num_workers, info.id)
        reader = self.rank * workers + worker_id
        return iter(self.items[reader::self.world_size * workers])


@contextmanager
def as_worker(worker_id: int, num_workers: int, dataset: IterableDataset) -> Iterator[None]:
    """Make get_worker_info() in this process say what it says in worker ``worker_id`` of
    ``num_workers``: what a worker process runs, without starting one."""
    saved = _worker._worker_info
    _worker._worker_info = _worker.WorkerInfo(id=worker_id, num_workers=num_workers, seed=0,
                                              dataset=dataset)
    try:
        yield
    finally:
        _worker._worker_info = saved


DEFAULTS = {"rank": 0, "world_size": 1, "drop_last": False}


@dataclass(frozen=True)
class Run:
    """One rank of a training run over a stream of ``length`` items."""

    length: int
    num_workers: int
    world_size: int
    rank: int
    batch_size: int = 1
    drop_last: bool = False
    spelled: bool = True

    @property
    def items(self) -> list[int]:  # distinct, and none equal to its position
        return list(range(100, 100 + 3 * self.length, 3))

    def kwargs(self, *names: str) -> dict:
        given = {n: getattr(self, n) for n in names}
        return {k: v for k, v in given.items() if self.spelled or v != DEFAULTS[k]}

    def workers(self) -> range:
        return range(max(self.num_workers, 1))

    def dataset(self) -> ShardedStream:
        return ShardedStream(self.items, self.rank, self.world_size)

    def read_by(self, worker_id: int) -> list[int]:
        """What the worker's copy of the stream yields (the main process's, with no workers)."""
        if self.num_workers == 0:
            return list(self.dataset())
        with as_worker(worker_id, self.num_workers, self.dataset()):
            return list(self.dataset())

    def batches_of(self, worker_id: int) -> list[list[int]]:
        """The batches the worker makes: DataLoader's own fetching and collation in it."""
        loader = DataLoader(self.dataset(), batch_size=self.batch_size, drop_last=self.drop_last)
        if self.num_workers == 0:
            return [b.tolist() for b in loader]
        with as_worker(worker_id, self.num_workers, loader.dataset):
            return [b.tolist() for b in loader]

    def expected_batches(self) -> list[list[int]]:
        """The workers' batches in the order the DataLoader's main process takes them: one
        from each worker in turn, skipping a worker that has run out (checked against real
        worker processes by test_loader_batches_match_real_worker_processes)."""
        per_worker = [self.batches_of(w) for w in self.workers()]
        rounds = max((len(b) for b in per_worker), default=0)
        return [b[r] for r in range(rounds) for b in per_worker if r < len(b)]

    def real_batches(self) -> list[list[int]]:
        """What a DataLoader with real worker processes yields."""
        with warnings.catch_warnings():  # more workers than this machine's cores
            warnings.simplefilter("ignore")
            loader = DataLoader(self.dataset(), batch_size=self.batch_size, drop_last=self.drop_last,
                                num_workers=self.num_workers,
                                multiprocessing_context="fork" if self.num_workers else None)
            return [b.tolist() for b in loader]

    def worker_call(self, impl, worker_id: int, items: list[int] | None = None):
        return impl.worker_items(self.items if items is None else items, worker_id, self.num_workers,
                                 **self.kwargs("rank", "world_size"))

    def batches_call(self, impl):
        return impl.loader_batches(self.items, self.num_workers, self.batch_size,
                                   **self.kwargs("rank", "world_size", "drop_last"))

    def describe(self, what: str = "") -> str:
        left = [k for k in ("rank", "world_size", "drop_last") if k not in self.kwargs(*DEFAULTS)]
        return (f"{what}{self.length} items {self.items[:3]}{'...' if self.length > 3 else ''}, "
                f"num_workers={self.num_workers}, rank={self.rank} of world_size={self.world_size}, "
                f"batch_size={self.batch_size}, drop_last={self.drop_last}"
                + (f" ({', '.join(left)} left out: the default)" if left else ""))


@st.composite
def runs(draw, min_length: int = 0, max_workers: int = 4, min_workers: int = 0) -> Run:
    world = draw(st.one_of(st.just(1), st.integers(1, 3)), label="world_size")
    return Run(length=draw(st.integers(min_length, 14), label="stream length"),
               num_workers=draw(st.integers(min_workers, max_workers), label="num_workers"),
               world_size=world,
               rank=draw(st.one_of(st.just(0), st.integers(0, world - 1)), label="rank"),
               batch_size=draw(st.integers(1, 3), label="batch_size"),
               drop_last=draw(st.booleans(), label="drop_last"),
               spelled=draw(st.booleans(), label="spelled"))


SPEC_ONE_RANK = Run(10, 2, 1, 0, spelled=False)
SPEC_TWO_RANKS = Run(10, 2, 2, 1)
SPEC_BATCHES = Run(10, 3, 1, 0, batch_size=2, spelled=False)
SPEC_BATCHES_DROPPED = Run(10, 3, 1, 0, batch_size=2, drop_last=True)


# ------------------------------------------------------------------ worker_items

@pytest.mark.weight(3)
@example(SPEC_ONE_RANK)
@example(SPEC_TWO_RANKS)
@example(Run(3, 4, 1, 0))  # more workers than items: one reads nothing
@example(Run(5, 0, 2, 1))  # no workers: the main process reads
@settings(max_examples=30)
@given(runs())
def test_worker_items_are_what_each_worker_reads(impl, run):
    """Every worker of the rank, each a new list (never the caller's)."""
    for w in run.workers():
        given_items = list(run.items)
        got = run.worker_call(impl, w, given_items)
        assert_no_shared_memory(got, given_items, what=run.describe(f"worker_items of worker {w}: "))
        assert_same(got, run.read_by(w), what=run.describe(
            f"worker_items of worker {w} (what its copy of ShardedStream yields): "))


def check_read_once(impl, run: Run) -> None:
    """All ranks and all their workers together read the stream once: every item by exactly
    one reader, whichever reader that is (the numbering is test_worker_items_are_what_each_worker_reads'
    claim)."""
    everyone = [Run(run.length, run.num_workers, run.world_size, r) for r in range(run.world_size)]
    seen = Counter(i for r in everyone for w in r.workers() for i in r.worker_call(impl, w))
    twice = sorted(i for i, k in seen.items() if k > 1)
    assert not twice, (f"{run.describe()}: items {twice[:5]} are read by more than one worker "
                       "(each reader must skip the others' items)")
    missing = sorted(set(run.items) - set(seen))
    assert not missing, f"{run.describe()}: items {missing[:5]} are read by no worker of any rank"


def one_reader(run: Run) -> Run:
    """The same stream read by one reader (one rank, no worker processes or one): whatever
    the numbering, that reader reads all of it, in order."""
    return Run(run.length, min(run.num_workers, 1), 1, 0, run.batch_size, run.drop_last, run.spelled)


@pytest.mark.weight(2)
@example(SPEC_TWO_RANKS)
@settings(max_examples=20)
@given(runs(min_length=1))
def test_every_item_is_read_exactly_once_per_epoch(impl, run):
    """All ranks and all their workers together read the stream once: no worker re-reads
    another's items (the notes' pitfall: every worker streams everything). Whose items a
    reader gets is not judged here: the anchor is the one-reader case, whole and in order."""
    alone = one_reader(run)
    with anchored(lambda: alone.worker_call(impl, 0), lambda: alone.read_by(0),
                  what=alone.describe("worker_items of the only reader (the whole stream, in order): ")):
        check_read_once(impl, run)


# ------------------------------------------------------------------ loader_batches

@pytest.mark.weight(3)
@example(SPEC_BATCHES)
@example(SPEC_BATCHES_DROPPED)
@example(Run(7, 2, 2, 0, batch_size=2, drop_last=True))
@settings(max_examples=30)
@given(runs())
def test_loader_batches_match_the_dataloader(impl, run):
    assert_same(run.batches_call(impl), run.expected_batches(),
                what=run.describe("loader_batches of ") + " (each worker batches its own shard; the "
                     "DataLoader takes one batch from each worker in turn)")


@pytest.mark.weight(2)
@example(SPEC_BATCHES)
@settings(max_examples=4)  # each example starts real worker processes
@given(runs(min_length=4, max_workers=3, min_workers=2))
def test_loader_batches_match_real_worker_processes(impl, run):
    assert_same(run.batches_call(impl), run.real_batches(),
                what=run.describe("loader_batches of ") + " (a DataLoader with real worker processes "
                     "gives the expected)")


BAD = (
    ({"worker_id": 0, "num_workers": -1}, "num_workers is negative"),
    ({"worker_id": 2, "num_workers": 2}, "worker_id == num_workers"),
    ({"worker_id": -1, "num_workers": 2}, "worker_id is negative"),
    ({"worker_id": 1, "num_workers": 0}, "worker_id 1 with no workers (only the main process reads)"),
    ({"worker_id": 0, "num_workers": 2, "world_size": 0}, "world_size is 0"),
    ({"worker_id": 0, "num_workers": 2, "rank": 2, "world_size": 2}, "rank == world_size"),
    ({"worker_id": 0, "num_workers": 2, "rank": -1, "world_size": 2}, "rank is negative"),
    ({"worker_id": 0, "num_workers": 2, "batch_size": 0}, "batch_size is 0"),
)


@settings(max_examples=8)
@given(runs(min_length=6, min_workers=2).filter(lambda r: r.batch_size > 1))
def test_bad_arguments_raise_value_error(impl, ordinary):
    # every bad argument of BAD in each example: one drawn per example left some untried
    alone = one_reader(ordinary)  # judged whatever the numbering or the order of the workers' batches
    with anchored(lambda: check_read_once(impl, ordinary)), \
            anchored(lambda: alone.batches_call(impl), alone.expected_batches,
                     what=alone.describe("loader_batches of ") + " (an ordinary call beside the error case)"):
        for bad in BAD:
            raises_value_error(impl, *bad)


def raises_value_error(impl, args: dict, why: str) -> None:
    args = dict(args)
    items = list(range(8))
    worker_id, batch_size = args.pop("worker_id"), args.pop("batch_size", 2)
    if batch_size >= 1:
        with expect_raises(ValueError, when=f"{why}: worker_items(items, {worker_id}, {args})"):
            impl.worker_items(items, worker_id, **args)
    if worker_id == 0 or args["num_workers"] < 0:
        with expect_raises(ValueError, when=f"{why}: loader_batches(items, batch_size={batch_size}, "
                                            f"{args})"):
            impl.loader_batches(items, batch_size=batch_size, **args)
