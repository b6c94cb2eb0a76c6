"""DistributedSampler as a pure function (shuffle, pad or drop, stride by rank) and worker shards."""

from collections import Counter
from dataclasses import dataclass, replace

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from torch.utils.data import DistributedSampler

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_no_shared_memory

pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.utils.data.DistributedSampler": (
        "build the list yourself: randperm(dataset_len) from a torch.Generator seeded with "
        "seed + epoch, pad it by repeating it from the start (or cut it with drop_last), then "
        "take every num_replicas-th index starting at rank"),
})


@dataclass(frozen=True)
class Setup:
    """One DistributedSampler configuration (every rank of it)."""

    dataset_len: int
    num_replicas: int
    shuffle: bool
    seed: int
    epoch: int
    drop_last: bool
    # Whether the call spells out the options that equal their defaults, or leaves them
    # out (so that every default is exercised).
    spelled: bool = True

    def options(self) -> dict:
        given = {"shuffle": self.shuffle, "seed": self.seed, "epoch": self.epoch,
                 "drop_last": self.drop_last}
        return {k: v for k, v in given.items() if self.spelled or v != DEFAULT_OPTIONS[k]}

    def describe(self, rank: int | None = None) -> str:
        who = "every rank" if rank is None else f"rank {rank}"
        left_out = [k for k in DEFAULT_OPTIONS if k not in self.options()]
        return (f"{who} of num_replicas={self.num_replicas}, dataset_len={self.dataset_len}, "
                f"shuffle={self.shuffle}, seed={self.seed}, epoch={self.epoch}, "
                f"drop_last={self.drop_last}"
                + (f" ({', '.join(left_out)} left out: the defaults)" if left_out else ""))


# The defaults of distributed_indices (and of DistributedSampler, before set_epoch).
DEFAULT_OPTIONS = {"shuffle": True, "seed": 0, "epoch": 0, "drop_last": False}


def setups(min_len: int = 0, max_len: int = 60, max_replicas: int = 8,
           shuffle: bool | None = None) -> st.SearchStrategy[Setup]:
    return st.builds(
        Setup,
        dataset_len=st.integers(min_len, max_len),
        num_replicas=st.integers(1, max_replicas),
        shuffle=st.booleans() if shuffle is None else st.just(shuffle),
        seed=st.one_of(st.just(0), st.integers(0, 2**32)),
        epoch=st.one_of(st.just(0), st.integers(0, 10)),
        drop_last=st.booleans(),
        spelled=st.booleans(),
    )


@st.composite
def setups_and_ranks(draw, setup: st.SearchStrategy[Setup]) -> tuple[Setup, int]:
    chosen = draw(setup)
    return chosen, draw(st.integers(0, chosen.num_replicas - 1), label="rank")


# The spec's worked examples: 5 indices over 2 ranks (rank 1 padded with index 0, or cut
# with drop_last), and 2 indices over 5 ranks, padded by repeating them more than once
# ("a b a b a": a sampler that pads at most one copy of the order gives rank 4 nothing).
SPEC_FIVE_OVER_TWO = Setup(5, 2, shuffle=False, seed=0, epoch=0, drop_last=False, spelled=False)
SPEC_DROP_LAST = Setup(5, 2, shuffle=False, seed=0, epoch=0, drop_last=True, spelled=False)
SPEC_TWO_OVER_FIVE = Setup(2, 5, shuffle=False, seed=0, epoch=0, drop_last=False, spelled=False)
SHUFFLED_TWO_OVER_FIVE = Setup(2, 5, shuffle=True, seed=0, epoch=0, drop_last=False, spelled=False)


def torch_indices(setup: Setup, rank: int) -> list[int]:
    """What the real DistributedSampler yields for ``rank`` (the oracle)."""
    sampler = DistributedSampler(range(setup.dataset_len), num_replicas=setup.num_replicas,
                                 rank=rank, shuffle=setup.shuffle, seed=setup.seed,
                                 drop_last=setup.drop_last)
    sampler.set_epoch(setup.epoch)
    return list(sampler)


def every_rank(impl, setup: Setup) -> list[list[int]]:
    return [impl.distributed_indices(setup.dataset_len, setup.num_replicas, rank,
                                     **setup.options())
            for rank in range(setup.num_replicas)]


def check_every_rank(got: list[list[int]], setup: Setup) -> None:
    """Each rank's list equals DistributedSampler's (rides with the consistency checks)."""
    for rank, indices in enumerate(got):
        assert_same(indices, torch_indices(setup, rank), what=f"{setup.describe(rank)}: indices")


def ordinary_setups() -> st.SearchStrategy[Setup]:
    """Valid configurations where no constant or echoed list is right: 5 to 60 indices over
    2 to 4 ranks."""
    return setups(min_len=5, max_replicas=4).filter(lambda s: s.num_replicas >= 2)


def on_ordinary_setup(impl, setup: Setup):
    """Rides along with an error check: every rank of an ordinary configuration against
    DistributedSampler."""
    return anchored(lambda: every_rank(impl, setup), lambda: None,
                    compare=lambda got, _, what: check_every_rank(got, setup),
                    what=f"{setup.describe()} (an ordinary call beside the error case)")


# ------------------------------------------------------------------ distributed_indices

@pytest.mark.weight(4)
@example((SPEC_FIVE_OVER_TWO, 0))
@example((SPEC_FIVE_OVER_TWO, 1))
@example((SPEC_DROP_LAST, 1))
@example((SPEC_TWO_OVER_FIVE, 4))
@example((SHUFFLED_TWO_OVER_FIVE, 3))
@given(setups_and_ranks(setups()))
def test_matches_distributed_sampler(impl, case):
    setup, rank = case
    got = impl.distributed_indices(setup.dataset_len, setup.num_replicas, rank, **setup.options())
    assert_same(got, torch_indices(setup, rank), what=f"{setup.describe(rank)}: indices")


@given(setups(min_len=1), st.data())
def test_returns_a_list_of_python_ints(impl, setup, data):
    """The form, then the same answer against DistributedSampler."""
    rank = data.draw(st.integers(0, setup.num_replicas - 1), label="rank")
    got = impl.distributed_indices(setup.dataset_len, setup.num_replicas, rank, **setup.options())
    assert type(got) is list, (
        f"distributed_indices returned a {type(got).__name__}; expected a list "
        "(call .tolist() on a tensor)")
    kinds = sorted({type(i).__name__ for i in got} - {"int"})
    assert not kinds, (f"distributed_indices returned a list holding {', '.join(kinds)}; "
                       "expected Python ints (a tensor's .tolist() gives them)")
    assert_same(got, torch_indices(setup, rank), what=f"{setup.describe(rank)}: indices")


@example(SPEC_TWO_OVER_FIVE)
@given(setups())
def test_every_rank_gets_the_same_number_of_indices(impl, setup):
    """The lengths, then every rank's list against DistributedSampler."""
    got = every_rank(impl, setup)
    lengths = [len(indices) for indices in got]
    assert len(set(lengths)) == 1, (
        f"{setup.describe()}: the ranks got {lengths} indices; every rank must get the same "
        "number, or the ranks take different numbers of steps and a collective hangs "
        "(pad by repeating from the start, or cut the tail with drop_last)")
    check_every_rank(got, setup)


@pytest.mark.weight(2)
@example(SPEC_FIVE_OVER_TWO)
@example(SPEC_DROP_LAST)
@example(SPEC_TWO_OVER_FIVE)
@example(SHUFFLED_TWO_OVER_FIVE)
@given(setups())
def test_ranks_together_cover_the_dataset(impl, setup):
    """The cover, then every rank's list against DistributedSampler."""
    got = every_rank(impl, setup)
    seen = Counter(i for indices in got for i in indices)
    strays = sorted(i for i in seen if not (isinstance(i, int) and 0 <= i < setup.dataset_len))
    assert not strays, f"{setup.describe()}: indices {strays[:5]} are not in the dataset"
    if setup.drop_last:
        twice = sorted(i for i, k in seen.items() if k > 1)
        assert not twice, (f"{setup.describe()}: indices {twice[:5]} are given out more than "
                           "once; with drop_last no index may be seen twice")
        expected = setup.dataset_len // setup.num_replicas * setup.num_replicas
        assert sum(seen.values()) == expected, (
            f"{setup.describe()}: the ranks got {sum(seen.values())} indices in all; with "
            f"drop_last they should get {expected} (the tail that does not divide evenly "
            "is dropped)")
    else:
        missing = sorted(set(range(setup.dataset_len)) - set(seen))
        assert not missing, (f"{setup.describe()}: indices {missing[:5]} are seen by no rank; "
                             "without drop_last every index must be seen at least once")
    check_every_rank(got, setup)


@given(setups(min_len=10, max_replicas=4, shuffle=True))
def test_a_new_epoch_reorders(impl, setup):
    later = replace(setup, epoch=setup.epoch + 1)
    assume(torch_indices(setup, 0) != torch_indices(later, 0))
    first, second = every_rank(impl, setup), every_rank(impl, later)
    assert first != second, (
        f"{setup.describe()}: epochs {setup.epoch} and {later.epoch} give the same order; "
        "seed the generator with seed + epoch so that each epoch is reshuffled")
    check_every_rank(first, setup)
    check_every_rank(second, later)


BAD_ARGUMENTS = [
    ((10, 0, 0), "num_replicas is 0"),
    ((10, -2, 0), "num_replicas is negative"),
    ((10, 3, 3), "rank == num_replicas"),
    ((10, 3, 7), "rank > num_replicas"),
    ((10, 3, -1), "rank is negative"),
    ((-1, 2, 0), "dataset_len is negative"),
]


@settings(max_examples=25)  # a handful of bad calls, each beside an ordinary one
@given(st.sampled_from(BAD_ARGUMENTS), ordinary_setups())
def test_bad_arguments_raise_value_error(impl, case, ordinary):
    args, why = case
    with on_ordinary_setup(impl, ordinary):
        with expect_raises(ValueError, when=f"{why} (dataset_len, num_replicas, rank = {args})"):
            impl.distributed_indices(*args)


# ------------------------------------------------------------------ worker_shard

@pytest.mark.weight(2)
@example([7, 3, 9, 1, 4], 2)  # the spec's example: worker 1 of 2 takes [3, 1]
@given(st.lists(st.integers(0, 60), max_size=40), st.integers(1, 6))
def test_worker_shards_are_strided_and_in_order(impl, indices, num_workers):
    """Each shard is a NEW list, even for one worker: the caller's list is not handed back."""
    for worker in range(num_workers):
        given_list = list(indices)
        got = impl.worker_shard(given_list, worker, num_workers)
        assert_same(got, indices[worker::num_workers],
                    what=f"shard of worker {worker} of {num_workers} "
                         f"(every {num_workers}-th index from position {worker})")
        assert_no_shared_memory(got, given_list,
                                what=f"shard of worker {worker} of {num_workers} (a new list)")


def ordinary_shard_cases() -> st.SearchStrategy[tuple[list[int], int, int]]:
    """(indices, worker_id, num_workers) with 2 to 4 workers and distinct indices, enough of
    them that every worker's shard differs from the list's start."""
    return st.integers(2, 4).flatmap(lambda k: st.tuples(
        st.lists(st.integers(0, 60), min_size=2 * k, max_size=20, unique=True),
        st.integers(1, k - 1), st.just(k)))


WORKER_BAD_IDS = [(0, 0, "num_workers is 0"), (0, -1, "num_workers is negative"),
                  (2, 2, "worker_id == num_workers"), (5, 2, "worker_id > num_workers"),
                  (-1, 2, "worker_id is negative")]


@settings(max_examples=25)  # a handful of bad calls, each beside an ordinary one
@given(st.sampled_from(WORKER_BAD_IDS), ordinary_shard_cases())
def test_worker_shard_bad_ids_raise_value_error(impl, case, ordinary):
    worker_id, num_workers, why = case
    indices, worker, workers = ordinary
    with anchored(lambda: impl.worker_shard(list(indices), worker, workers),
                  lambda: indices[worker::workers],
                  what=f"shard of worker {worker} of {workers} of {indices} (an ordinary call "
                       "beside the error case)"):
        with expect_raises(ValueError, when=f"{why} (worker_id={worker_id}, "
                                            f"num_workers={num_workers})"):
            impl.worker_shard([0, 1, 2, 3], worker_id, num_workers)
