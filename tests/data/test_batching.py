"""BatchSampler's batches, len(DataLoader) with and without drop_last, and a padding collate_fn."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import BatchSampler, DataLoader, default_collate

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_arguments_unchanged, assert_no_shared_memory, assert_ordinary
from tests.strategies import float_tensors, int_tensors, sampled

_PAD_BY_HAND = "allocate (B, max length, *rest) with torch.full and copy each sequence into the start of its row"
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.utils.data.BatchSampler": "cut the order into consecutive slices of batch_size",
    "torch.utils.data.DataLoader": "count the batches: rounded up, or down with drop_last",
    "torch.utils.data.default_collate": "stack the tensors of each key, make numbers a tensor, "
                                        "keep strings as a list",
    "torch.nn.utils.rnn.pad_sequence": _PAD_BY_HAND,
    # the capability: padding sequences into a batch (packing then unpacking, nested tensors)
    "torch.nn.utils.rnn.pad_packed_sequence": _PAD_BY_HAND,
    "torch.nested": _PAD_BY_HAND,
    "torch.Tensor.to_padded_tensor": _PAD_BY_HAND,
})

DEFAULTS = {"drop_last": False, "padding_value": 0}


def options(spelled: bool, **given) -> dict:
    """The keyword arguments of a call: all of them, or only those that differ from the
    default (so every default is exercised)."""
    return {k: v for k, v in given.items() if spelled or v != DEFAULTS[k]}


def left_out(kwargs: dict, names: tuple[str, ...]) -> str:
    missing = [n for n in names if n not in kwargs]
    return f" ({', '.join(missing)} left out: the default)" if missing else ""


# ------------------------------------------------------------------ batch_indices

@dataclass(frozen=True)
class Batching:
    order: tuple[int, ...]
    batch_size: int
    drop_last: bool
    spelled: bool = True

    def kwargs(self) -> dict:
        return options(self.spelled, drop_last=self.drop_last)

    def call(self, impl):
        return impl.batch_indices(list(self.order), self.batch_size, **self.kwargs())

    def expected(self) -> list[list[int]]:
        return list(BatchSampler(list(self.order), self.batch_size, self.drop_last))

    def describe(self) -> str:
        return (f"batch_indices({list(self.order)}, batch_size={self.batch_size}, "
                f"drop_last={self.drop_last}){left_out(self.kwargs(), ('drop_last',))}")


def batchings(min_len: int = 0) -> st.SearchStrategy[Batching]:
    return st.builds(Batching,
                     order=st.lists(st.integers(0, 60), min_size=min_len, max_size=25).map(tuple),
                     batch_size=st.integers(1, 8), drop_last=st.booleans(), spelled=st.booleans())


BATCHINGS = batchings()
SOME_BATCHINGS = batchings(min_len=1)


SPEC_BATCHES = Batching((4, 1, 0, 3, 2), 2, False, spelled=False)
SPEC_BATCHES_DROPPED = Batching((4, 1, 0, 3, 2), 2, True)


def ordinary_batching() -> st.SearchStrategy[Batching]:
    """Orders long enough that a batch is cut in the middle (no echo or constant is right),
    without drop_last: the anchor of a property about something else, so that a mistake
    about drop_last costs only the property named for batches."""
    return batchings(min_len=5).filter(lambda b: 2 <= b.batch_size < len(b.order) - 1).map(
        lambda b: replace(b, drop_last=False))


ORDINARY_BATCHING = ordinary_batching()


@pytest.mark.weight(3)
@example(SPEC_BATCHES)
@example(SPEC_BATCHES_DROPPED)
@example(Batching((0, 1, 2, 3), 2, True, spelled=False))  # even: drop_last drops nothing
@example(Batching((3, 1), 4, True))  # shorter than one batch: drop_last leaves no batch
@settings(max_examples=40)
@given(BATCHINGS)
def test_batch_indices_match_batch_sampler(impl, case):
    assert_same(case.call(impl), case.expected(),
                what=f"{case.describe()} (list(BatchSampler(...)) gives the expected)")


@settings(max_examples=15)
@given(SOME_BATCHINGS, ORDINARY_BATCHING)
def test_batch_indices_are_new_lists_of_python_ints(impl, case, ordinary):
    """The form of any answer (corners too: one batch, drop_last); its values are the
    property named for them, and an ordinary call's answer anchors this one."""
    given_order = list(case.order)
    got = impl.batch_indices(given_order, case.batch_size, **case.kwargs())
    assert type(got) is list and all(type(b) is list for b in got), (
        f"{case.describe()} returned {type(got).__name__} of "
        f"{sorted({type(b).__name__ for b in got}) if isinstance(got, list) else '?'}; expected a "
        "list of lists")
    kinds = sorted({type(i).__name__ for b in got for i in b} - {"int"})
    assert not kinds, f"{case.describe()}: the batches hold {kinds}; expected Python ints"
    for batch in got:
        assert_no_shared_memory(batch, given_order, what=f"{case.describe()}: a batch (a new list)")
    assert_ordinary(lambda: ordinary.call(impl), ordinary.expected,
                    what=f"{ordinary.describe()} (BatchSampler gives the expected)")


# ------------------------------------------------------------------ num_batches

# The longest dataset len() can report (len(DataLoader(...)) of a longer one raises
# OverflowError): dataset_len is a Python int up to it. Past 2**53 a float no longer holds
# every int, so a count that goes through dataset_len / batch_size is off there.
LONGEST = sys.maxsize
FLOAT_EXACT = 2**53
DATASET_LENS = st.one_of(st.integers(0, 60), st.integers(FLOAT_EXACT - 4, FLOAT_EXACT + 64),
                         st.integers(0, LONGEST))
BATCH_SIZES = st.one_of(st.integers(1, 12), st.integers(1, LONGEST))


@pytest.mark.weight(2)
@example(10, 3, False, False)  # the spec's examples
@example(10, 3, True, True)
@example(0, 4, False, True)
@example(FLOAT_EXACT + 1, 1, False, False)  # the float of 2**53 + 1 is 2**53
@example(LONGEST, 3, True, True)
@settings(max_examples=40)
@given(DATASET_LENS, BATCH_SIZES, st.booleans(), st.booleans())
def test_num_batches_matches_len_of_a_dataloader(impl, dataset_len, batch_size, drop_last, spelled):
    kwargs = options(spelled, drop_last=drop_last)
    expected = len(DataLoader(range(dataset_len), batch_size=batch_size, drop_last=drop_last))
    got = impl.num_batches(dataset_len, batch_size, **kwargs)
    big = (" (past 2**53 a float does not hold every int: count in ints, -(-n // b), not "
           "math.ceil(n / b))" if max(dataset_len, batch_size) > FLOAT_EXACT else "")
    assert_same(got, expected, what=f"num_batches({dataset_len}, {batch_size}, drop_last={drop_last})"
                                    f"{left_out(kwargs, ('drop_last',))} (len(DataLoader(...)) gives "
                                    f"the expected: rounded up, or down with drop_last){big}")


BAD_SIZES = [((10, 0), "batch_size is 0"), ((10, -2), "batch_size is negative"),
             ((-1, 2), "dataset_len is negative")]


@settings(max_examples=15)
@given(sampled(tuple(BAD_SIZES)), ORDINARY_BATCHING)
def test_bad_sizes_raise_value_error(impl, bad, ordinary):
    (dataset_len, batch_size), why = bad
    n = len(ordinary.order)
    with anchored(lambda: ordinary.call(impl), ordinary.expected, what=f"{ordinary.describe()} (an ordinary call "
                                                          "beside the error case)"), \
            anchored(lambda: impl.num_batches(n, ordinary.batch_size, drop_last=ordinary.drop_last),
                     lambda: len(ordinary.expected()),
                     what=f"num_batches({n}, {ordinary.batch_size}, drop_last={ordinary.drop_last}) "
                          "(an ordinary call beside the error case)"):
        with expect_raises(ValueError, when=f"{why}: num_batches({dataset_len}, {batch_size})"):
            impl.num_batches(dataset_len, batch_size)
        if batch_size < 1:
            with expect_raises(ValueError, when=f"{why}: batch_indices([0, 1, 2], {batch_size})"):
                impl.batch_indices([0, 1, 2], batch_size)


# ------------------------------------------------------------------ pad_collate

@dataclass
class Collate:
    samples: list[dict]
    padding_value: int | float
    spelled: bool = True

    def kwargs(self) -> dict:
        return options(self.spelled, padding_value=self.padding_value)

    def fresh(self) -> list[dict]:
        return [{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
                for s in self.samples]

    def call(self, impl, samples: list[dict] | None = None):
        return impl.pad_collate(self.fresh() if samples is None else samples, **self.kwargs())

    def expected(self) -> dict:
        batch: dict = {}
        for key in self.samples[0]:
            values = [s[key] for s in self.samples]
            if isinstance(values[0], torch.Tensor) and len({tuple(v.shape) for v in values}) > 1:
                batch[key] = pad_sequence(values, batch_first=True, padding_value=self.padding_value)
                batch[f"{key}_lengths"] = torch.tensor([v.shape[0] for v in values])
            else:
                batch[key] = default_collate(values)
        return batch

    def describe(self) -> str:
        def shown(v) -> str:
            if isinstance(v, torch.Tensor):
                return f"tensor{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
            return repr(v)
        rows = ", ".join("{" + ", ".join(f"{k!r}: {shown(v)}" for k, v in s.items()) + "}"
                         for s in self.samples)
        return (f"pad_collate([{rows}], padding_value={self.padding_value!r})"
                f"{left_out(self.kwargs(), ('padding_value',))}")


def check_batch(got, expected: dict, what: str) -> None:
    """A dict with the expected keys in the expected order, each value as expected."""
    assert type(got) is dict, f"{what}: returned a {type(got).__name__}; expected a dict"
    assert list(got) == list(expected), (
        f"{what}: the keys are {list(got)}; expected {list(expected)} (the first sample's key "
        "order, each padded key followed by its '_lengths')")
    for key, value in expected.items():
        assert_same(got[key], value, what=f"{what}: batch[{key!r}]")


# A field: how its values are drawn for sample i of B.
FIELDS = ("tokens", "frames", "features", "label", "weight", "name")


@st.composite
def collates(draw, min_samples: int = 1, ragged: bool | None = None, fields: tuple[str, ...] = FIELDS,
             padded_with_zeros: bool = False, key_orders: bool = True) -> Collate:
    b = draw(st.integers(min_samples, 4), label="number of samples")
    keys = draw(st.lists(sampled(fields), min_size=1, max_size=4, unique=True), label="keys")
    if ragged and not {"tokens", "frames"} & set(keys):
        keys.append("tokens")
    samples: list[dict] = [{} for _ in range(b)]
    for key in keys:
        if key in ("tokens", "frames"):
            uneven = draw(st.booleans(), label=f"{key}: lengths differ") if ragged is None else ragged
            lengths = (draw(st.lists(st.integers(1, 5), min_size=b, max_size=b), label=f"{key}: lengths")
                       if uneven or b == 1 else [draw(st.integers(1, 5), label=f"{key}: length")] * b)
            if ragged and b > 1 and len(set(lengths)) == 1:
                lengths[0] += 1
            for s, n in zip(samples, lengths):
                s[key] = (draw(int_tensors((n,), 1, 9), label=key) if key == "tokens"
                          else draw(float_tensors((n, 2), low=-3, high=3), label=key).float())
        elif key == "features":
            shape = draw(sampled(((), (2,), (2, 3))), label="features: shape")
            for s in samples:
                s[key] = draw(float_tensors(shape, low=-3, high=3), label=key)
        elif key == "label":
            for s in samples:
                s[key] = draw(st.integers(0, 9), label=key)
        elif key == "weight":
            for s in samples:
                s[key] = draw(st.floats(-3, 3, width=32), label=key)
        else:
            for s in samples:
                s[key] = draw(st.text("abc", max_size=3), label=key)
    if key_orders and b > 1 and len(keys) > 1 and draw(st.booleans(), label="later samples list their keys in another order"):
        for i in range(1, b):
            order = draw(st.permutations(keys), label=f"sample {i}'s key order")
            samples[i] = {k: samples[i][k] for k in order}
    padding = 0 if padded_with_zeros else draw(st.one_of(st.just(0), st.integers(-1, 9)), label="padding_value")
    return Collate(samples, padding, draw(st.booleans(), label="spelled"))


COLLATES = collates()
RAGGED_COLLATES = collates(ragged=True)
# The anchor of a property about something else: token sequences of unequal lengths and
# int labels (the spec's example), padded with the default, so that a mistake about
# padding_value, floats, strings, equal shapes or samples listing their keys in another order
# costs only the property named for values.
ORDINARY_COLLATE = collates(min_samples=2, ragged=True, fields=("tokens", "label"), padded_with_zeros=True,
                            key_orders=False)


SPEC_COLLATE = Collate([{"tokens": torch.tensor([5, 6, 7]), "label": 1},
                        {"tokens": torch.tensor([8]), "label": 0}], 0, spelled=False)


@pytest.mark.weight(3)
@example(SPEC_COLLATE)
@example(Collate([SPEC_COLLATE.samples[0], {"label": 0, "tokens": torch.tensor([8])}], 0))  # the first's key order
@example(Collate([{"frames": torch.ones(2, 2), "name": "a"}, {"frames": torch.ones(3, 2), "name": "b"}],
                 -1))
@settings(max_examples=30)
@given(COLLATES)
def test_pad_collate_matches_default_collate_and_pad_sequence(impl, case):
    check_batch(case.call(impl), case.expected(),
                f"{case.describe()} (default_collate for equal shapes and numbers, pad_sequence "
                "with batch_first=True and the lengths for sequences of unequal lengths)")


@settings(max_examples=15)
@given(RAGGED_COLLATES, ORDINARY_COLLATE)
def test_pad_collate_leaves_the_samples_alone_and_returns_new_tensors(impl, case, ordinary):
    """Any batch (every kind of value, any padding_value) leaves its samples alone and
    shares no memory with them; an ordinary call's answer anchors it."""
    samples = case.fresh()
    got = case.call(impl, samples)
    assert_arguments_unchanged(impl, what="the samples after pad_collate (build new tensors)")
    if type(got) is dict:
        inputs = [v for s in samples for v in s.values() if isinstance(v, torch.Tensor)]
        for key, value in got.items():
            if isinstance(value, torch.Tensor):
                assert_no_shared_memory(value, *inputs, what=f"{case.describe()}: batch[{key!r}]")
    assert_ordinary(lambda: ordinary.call(impl), ordinary.expected, compare=check_batch,
                    what=f"{ordinary.describe()} (an ordinary call beside the check)")


MISMATCHES = ("keys differ", "trailing shape differs", "number of dims differs", "dtype differs",
              "no samples")


@settings(max_examples=20)
@given(sampled(MISMATCHES), collates(min_samples=2, ragged=True), ORDINARY_COLLATE)
def test_pad_collate_refuses_what_cannot_be_batched(impl, how, case, ordinary):
    samples = case.fresh()
    key = next(k for k in ("tokens", "frames") if k in samples[0])
    last = samples[-1]
    if how == "keys differ":
        last["extra"] = 1
    elif how == "trailing shape differs":
        last[key] = torch.zeros(2, 3, dtype=last[key].dtype) if key == "tokens" else torch.zeros(2, 3)
    elif how == "number of dims differs":
        last[key] = last[key].unsqueeze(-1)
    elif how == "dtype differs":
        last[key] = last[key].double()
    else:
        samples = []
    with anchored(lambda: ordinary.call(impl), ordinary.expected,
                  compare=check_batch, what=f"{ordinary.describe()} (an ordinary call beside the error case)"):
        with expect_raises(ValueError, when=f"{how} (pad_collate of {len(samples)} samples, key {key!r})"):
            impl.pad_collate(samples)


# ------------------------------------------------------------------ GPU

@pytest.mark.cuda
@settings(max_examples=15)
@given(RAGGED_COLLATES)
def test_on_gpu_batches_stay_on_the_device(impl, case):
    """Tensors on the GPU come back on the GPU; the lengths stay on the CPU."""
    samples = [{k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
               for s in case.samples]
    got = impl.pad_collate(samples, **case.kwargs())
    expected = case.expected()
    assert type(got) is dict and list(got) == list(expected), f"{case.describe()} on cuda: keys {got!r}"
    for key, value in expected.items():
        if isinstance(value, torch.Tensor):
            on = "cpu" if key.endswith("_lengths") or not any(
                isinstance(s.get(key), torch.Tensor) for s in case.samples) else "cuda"
            assert isinstance(got[key], torch.Tensor) and got[key].device.type == on, (
                f"{case.describe()} on cuda: batch[{key!r}] is on "
                f"{getattr(got[key], 'device', None)}; expected {on}")
            assert_same(got[key].cpu(), value, what=f"{case.describe()} on cuda: batch[{key!r}]")
        else:
            assert_same(got[key], value, what=f"{case.describe()} on cuda: batch[{key!r}]")
