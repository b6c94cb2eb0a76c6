"""K-fold indices: the folds partition range(n), sizes differ by at most one, one seeded permutation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import as_tuple, assert_same, expect_raises
from tests.properties import anchored, assert_ordinary
from tests.strategies import reusable

pytestmark = pytest.mark.exercise(points=10)


@dataclass(frozen=True)
class Split:
    """One k-fold configuration (every fold of it)."""

    n: int
    k: int
    shuffle: bool
    seed: int
    # Whether a call spells out the options equal to their defaults (shuffle=False,
    # seed=0) or leaves them out, so that every default is exercised.
    spelled: bool = True

    def options(self) -> dict:
        given = {"shuffle": self.shuffle, "seed": self.seed}
        return {k: v for k, v in given.items() if self.spelled or v != DEFAULT_OPTIONS[k]}

    def describe(self, fold: int | None = None) -> str:
        which = "every fold" if fold is None else f"fold {fold}"
        left_out = [k for k in DEFAULT_OPTIONS if k not in self.options()]
        return (f"{which} of n={self.n}, k={self.k}, shuffle={self.shuffle}, seed={self.seed}"
                + (f" ({', '.join(left_out)} left out: the defaults)" if left_out else ""))

    def call(self, impl, fold: int):
        return impl.kfold_indices(self.n, self.k, fold, **self.options())


# The defaults of kfold_indices.
DEFAULT_OPTIONS = {"shuffle": False, "seed": 0}


@reusable
@st.composite
def splits(draw, shuffle: bool | None = None, max_n: int = 30) -> Split:
    n = draw(st.integers(2, max_n), label="n")
    k = draw(st.integers(2, min(n, 8)), label="k")
    return Split(n, k, draw(st.booleans()) if shuffle is None else shuffle,
                 draw(st.one_of(st.just(0), st.integers(0, 2**32)), label="seed"),
                 spelled=draw(st.booleans(), label="defaults spelled out"))


@st.composite
def splits_and_folds(draw, split: st.SearchStrategy[Split]) -> tuple[Split, int]:
    chosen = draw(split)
    return chosen, draw(st.integers(0, chosen.k - 1), label="fold")


# The spec's example: kfold_indices(10, 4, 1) holds out [3, 4, 5] of [0 1 2] [3 4 5] [6 7] [8 9].
SPEC_EXAMPLE = (Split(10, 4, shuffle=False, seed=0, spelled=False), 1)


def expected_split(split: Split, fold: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The spec with PyTorch's own pieces: the order, cut by ``tensor_split``."""
    if split.shuffle:
        order = torch.randperm(split.n, generator=torch.Generator().manual_seed(split.seed))
    else:
        order = torch.arange(split.n)
    folds = list(order.tensor_split(split.k))
    valid = folds.pop(fold)
    return torch.cat(folds), valid


def as_index_lists(result, where: str) -> tuple[list[int], list[int]]:
    """``(train, valid)`` as lists of ints, whatever sequence type carries them."""
    assert isinstance(result, (tuple, list)) and len(result) == 2, (
        f"{where}: kfold_indices should return (train, valid), got {type(result).__name__}")
    return [int(i) for i in result[0]], [int(i) for i in result[1]]


def describe_value(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dim()}-D {value.dtype} tensor"
    return f"a {type(value).__name__}"


def every_fold(impl, split: Split) -> list[tuple[list[int], list[int]]]:
    return [as_index_lists(split.call(impl, fold), split.describe(fold)) for fold in range(split.k)]


def check_folds(folds: list[tuple[list[int], list[int]]], split: Split) -> None:
    """Every fold's (train, valid) equals the spec's (rides with the consistency checks)."""
    for fold, (train, valid) in enumerate(folds):
        expected = expected_split(split, fold)
        assert (train, valid) == (expected[0].tolist(), expected[1].tolist()), (
            f"{split.describe(fold)}: got train={train}, valid={valid}; expected "
            f"train={expected[0].tolist()}, valid={expected[1].tolist()} (folds of "
            + ("torch.randperm(n, generator=torch.Generator().manual_seed(seed))"
               if split.shuffle else "torch.arange(n)") + ", cut as tensor_split cuts)")


_ORDINARY_SPLITS = splits().filter(lambda s: s.n >= 5 and s.k <= 4)


@st.composite
def ordinary_splits(draw) -> tuple[Split, int]:
    """A valid split and fold whose answer no constant, empty or echoed answer matches: 5 to
    30 examples, 2 to 4 folds, a fold other than the first."""
    split = draw(_ORDINARY_SPLITS)
    return split, draw(st.integers(1, split.k - 1), label="fold")


# ------------------------------------------------------------------ properties


@pytest.mark.weight(3)
@example(SPEC_EXAMPLE)
@given(splits_and_folds(splits(shuffle=False)))
def test_unshuffled_folds_match_tensor_split(impl, case):
    split, fold = case
    assert_same(split.call(impl, fold), expected_split(split, fold),
                what=f"(train, valid) of {split.describe(fold)} (folds as "
                     "torch.arange(n).tensor_split(k) cuts them)")


@pytest.mark.weight(2)
@given(splits_and_folds(splits(shuffle=True)))
def test_shuffled_folds_cut_the_seeded_permutation(impl, case):
    split, fold = case
    assert_same(split.call(impl, fold), expected_split(split, fold),
                what=f"(train, valid) of {split.describe(fold)} (folds of "
                     "torch.randperm(n, generator=torch.Generator().manual_seed(seed)), cut as "
                     "tensor_split cuts)")


@pytest.mark.weight(2)
@given(splits())
def test_folds_partition_the_examples(impl, split):
    folds = every_fold(impl, split)
    seen: dict[int, list[int]] = {}
    for fold, (train, valid) in enumerate(folds):
        for i in valid:
            seen.setdefault(i, []).append(fold)
        both = sorted(set(train) & set(valid))
        assert not both, f"{split.describe(fold)}: indices {both[:5]} are in train and in valid"
        assert sorted(train + valid) == list(range(split.n)), (
            f"{split.describe(fold)}: train and valid together should hold each of 0..{split.n - 1} "
            f"exactly once, got train={train}, valid={valid}")
    twice = {i: f for i, f in seen.items() if len(f) > 1}
    missing = sorted(set(range(split.n)) - set(seen))
    assert not twice and not missing, (
        f"{split.describe()}: over the k calls every index must be validated on exactly once; "
        + (f"index {min(twice)} is in the valid sets of folds {twice[min(twice)]}" if twice
           else f"indices {missing[:5]} are in no valid set")
        + (" (every call must rebuild the same permutation from seed)" if split.shuffle else ""))
    check_folds(folds, split)


@pytest.mark.weight(2)
@settings(max_examples=50)
@given(splits(max_n=60))
def test_fold_sizes_differ_by_at_most_one(impl, split):
    folds = every_fold(impl, split)
    sizes = [len(valid) for _, valid in folds]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == split.n, (
        f"{split.describe()}: the valid folds have sizes {sizes}; they should add up to "
        f"{split.n} and differ by at most one (the first n % k folds get n // k + 1)")
    check_folds(folds, split)


@settings(max_examples=30)
@given(splits())
def test_returns_two_int64_tensors(impl, split):
    """The form, then the same answer against the spec's."""
    result = split.call(impl, 0)
    assert isinstance(result, tuple) and len(as_tuple(result)) == 2, (
        f"kfold_indices should return a tuple (train, valid), got {type(result).__name__}")
    result = as_tuple(result)  # a named tuple is a tuple too
    for name, value in zip(("train", "valid"), result):
        assert type(value) is torch.Tensor and value.dtype == torch.int64 and value.dim() == 1, (
            f"{name} is {describe_value(value)}; expected a 1-D torch.int64 tensor of indices")
    assert_same(result, expected_split(split, 0), what=f"(train, valid) of {split.describe(0)}")



@settings(max_examples=50)
@given(ordinary_splits().filter(lambda case: case[0].shuffle))
def test_global_random_state_is_untouched(impl, case):
    """Observed where the code runs (the worker, in the sandbox): ``impl.effects`` lists
    what the call changed of torch's global state (and the grader put back)."""
    split, fold = case
    got = split.call(impl, fold)
    changed = list(impl.effects)
    assert not changed, (
        f"{split.describe(fold)}: the call changed {'; '.join(changed)}; shuffle with your own "
        "torch.Generator().manual_seed(seed), never torch.manual_seed or an unseeded torch.randperm")
    assert_ordinary(lambda: got, lambda: expected_split(split, fold), what=f"(train, valid) of {split.describe(fold)}")


BAD_ARGUMENTS = [
    ((10, 1, 0), "k is 1"),
    ((10, 0, 0), "k is 0"),
    ((3, 4, 0), "k > n (a fold would be empty)"),
    ((0, 2, 0), "n is 0"),
    ((10, 3, 3), "fold == k"),
    ((10, 3, -1), "fold is negative"),
]


@settings(max_examples=30)  # every bad call in every example, beside an ordinary one
@given(st.booleans(), ordinary_splits())
def test_bad_arguments_raise_value_error(impl, shuffle, ordinary):
    """Each of the spec's bad calls, every time (a drawn one was missed: k == 1 went
    unchecked on the public examples)."""
    split, good_fold = ordinary
    with anchored(lambda: split.call(impl, good_fold), lambda: expected_split(split, good_fold),
                  what=f"(train, valid) of {split.describe(good_fold)} (an ordinary call beside "
                       "the error cases)"):
        for (n, k, fold), why in BAD_ARGUMENTS:
            with expect_raises(ValueError, when=f"{why} (n={n}, k={k}, fold={fold}, shuffle={shuffle})"):
                impl.kfold_indices(n, k, fold, shuffle=shuffle)
