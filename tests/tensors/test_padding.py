"""Pad variable-length sequences batch-first (with lengths) and one-hot sequences to a length."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st
from torch.nn.utils.rnn import pad_sequence

from grader.testing import assert_same, expect_raises
from tests.properties import anchored, assert_arguments_unchanged, assert_no_shared_memory, assert_ordinary
from tests.strategies import VALUE_LAYOUTS, any_layout, copy_in_layout, relaid, sampled, shapes

_INSTEAD = ("allocate the (B, T_max, *rest) result with torch.full(..., padding_value, "
            "dtype=..., device=...) and copy each sequence into the front of its row")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.nn.utils.rnn.pad_sequence": _INSTEAD,
    # the kernel behind pad_sequence (and pack_sequence): what the guard sees
    "torch._C._nn.pad_sequence": "that is the kernel of torch.nn.utils.rnn.pad_sequence, "
                                 "forbidden here: " + _INSTEAD,
})

# float16 and bfloat16 run on the CPU too: padding only copies values, so they stay exact
DTYPES = [torch.float64, torch.float32, torch.int64, torch.float16, torch.bfloat16]
# the sequences are only read: any layout, stride-0 expanded views included
READ_ONLY_LAYOUTS = (*VALUE_LAYOUTS, "expanded")
# Reduced precision on the GPU: padding only copies values, so results are exact.
GPU_DTYPES = [torch.float32, torch.float16, torch.bfloat16]


# ------------------------------------------------------------------ strategies

@st.composite
def sequence_batches(draw, dtypes=DTYPES) -> tuple[list[torch.Tensor], float]:
    """(seqs, padding_value): 1-4 sequences (T_i, *rest), T_i in 0..5, 0-2 trailing dims.

    Only the structure is drawn (it is what shrinks); the values are small integers
    from torch's generator, reseeded per example. Each sequence comes in a memory
    layout of its own (transposed, sliced out of a larger storage, expanded). Integer
    sequences get an integer-valued padding value (as a float, like the default)."""
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    rest = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="rest")
    lengths = draw(st.lists(st.integers(0, 5), min_size=1, max_size=4), label="lengths")
    seqs = [draw(any_layout(torch.randint(1, 10, (t, *rest)).to(dtype), READ_ONLY_LAYOUTS,
                            label=f"seqs[{i}]")) for i, t in enumerate(lengths)]
    if dtype.is_floating_point:
        padding_value = draw(st.floats(-10, 10, width=16), label="padding_value")
    else:
        padding_value = float(draw(st.integers(-9, 9), label="padding_value"))
    return seqs, padding_value


@st.composite
def one_hot_sequences(draw) -> tuple[torch.Tensor, int]:
    """(sequence, target_length): an F.one_hot (T, C) sequence, int64 or float32, T in 0..5."""
    t, c = draw(st.integers(0, 5), label="T"), draw(st.integers(1, 5), label="C")
    dtype = draw(st.sampled_from([torch.int64, torch.float32, torch.bfloat16]), label="dtype")
    target_length = t + draw(st.integers(0, 4), label="target_length - T")
    sequence = F.one_hot(torch.randint(0, c, (t,)), c).to(dtype)
    return draw(any_layout(sequence, VALUE_LAYOUTS, label="sequence")), target_length


# ------------------------------------------------------------------ helpers

def clones(seqs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Fresh copies, each in the memory layout drawn for it."""
    return [copy_in_layout(s) for s in seqs]


def expected_pad_one_hot(sequence: torch.Tensor, target_length: int) -> torch.Tensor:
    extra = target_length - sequence.shape[0]
    return torch.cat([sequence, sequence.new_zeros(extra, sequence.shape[1])])


def ordinary_batch(impl, seqs: list[torch.Tensor], padding_value: float, why: str):
    """An anchor: pad_sequences of a valid batch equals pad_sequence (batch first) and the lengths."""
    def check() -> None:
        padded, lengths = unpack(impl.pad_sequences(clones(seqs), padding_value))
        assert_same(padded, pad_sequence(seqs, batch_first=True, padding_value=padding_value),
                    what=f"padded of a valid batch (padding_value={padding_value}; {why})")
        assert_same(lengths, torch.tensor([len(s) for s in seqs], dtype=torch.int64),
                    what=f"lengths of a valid batch ({why})")
    return anchored(check)


def ordinary_one_hot(impl, sequence: torch.Tensor, target_length: int, why: str):
    """An anchor: pad_one_hot to a valid length appends zero rows."""
    return anchored(lambda: impl.pad_one_hot(copy_in_layout(sequence), target_length),
                    lambda: expected_pad_one_hot(sequence, target_length),
                    what=f"pad_one_hot of a ({sequence.shape[0]}, {sequence.shape[1]}) sequence "
                         f"to {target_length} steps ({why})")


def unpack(got: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's (padded, lengths), checked to be a tuple of two tensors."""
    if not (isinstance(got, tuple) and len(got) == 2
            and all(isinstance(t, torch.Tensor) for t in got)):
        raise AssertionError(f"pad_sequences returned {type(got).__name__}; expected a tuple "
                             "(padded, lengths) of two tensors")
    return got


def check_pad_sequences_on_device(pad_sequences, seqs: list[torch.Tensor], padding_value: float,
                                  dtype: torch.dtype, device: str) -> None:
    """Sequences of ``dtype`` on ``device``: the padding stays there, exact; lengths on the CPU."""
    expected = pad_sequence([s.to(dtype) for s in seqs], batch_first=True,
                            padding_value=padding_value)
    padded, lengths = unpack(pad_sequences([s.to(device, dtype) for s in seqs], padding_value))
    assert padded.device.type == device and padded.dtype == dtype, (
        f"padded is {padded.dtype} on {padded.device}; expected {dtype} on {device}, "
        "like the sequences")
    assert_same(padded.cpu(), expected, what=f"padded {dtype} sequences on {device}")
    assert_same(lengths, torch.tensor([len(s) for s in seqs], dtype=torch.int64),
                what="lengths (int64, on the CPU even when the sequences are on the GPU)")


# ------------------------------------------------------------------ pad_sequences

@pytest.mark.weight(3)
@settings(max_examples=50)
@example(([torch.tensor([1., 2., 3.]), torch.tensor([4.])], -1.0))  # the spec's example
@given(sequence_batches())
def test_matches_pad_sequence_batch_first(impl, case):
    seqs, padding_value = case
    expected = pad_sequence(seqs, batch_first=True, padding_value=padding_value)
    padded, _ = unpack(impl.pad_sequences(clones(seqs), padding_value))
    assert_same(padded, expected, what=f"padded (batch first, padding_value={padding_value})")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(sequence_batches())
def test_lengths_are_int64_on_cpu(impl, case):
    seqs, padding_value = case
    padded, lengths = unpack(impl.pad_sequences(clones(seqs), padding_value))
    assert_same(lengths, torch.tensor([len(s) for s in seqs], dtype=torch.int64),
                what="lengths (a 1-D int64 tensor of every T_i)")
    assert_same(padded, pad_sequence(seqs, batch_first=True, padding_value=padding_value),
                what=f"padded (batch first, padding_value={padding_value}), beside the lengths")


@settings(max_examples=30)
@given(sequence_batches(dtypes=[torch.int64]))
def test_default_padding_is_zero_and_keeps_integer_dtype(impl, case):
    seqs, _ = case
    padded, _ = unpack(impl.pad_sequences(clones(seqs)))
    assert_same(padded, pad_sequence(seqs, batch_first=True),
                what="padded int64 token ids with the default padding_value (0, still int64)")


@settings(max_examples=20)
@given(sequence_batches())
def test_inputs_are_left_unchanged(impl, case):
    seqs, padding_value = case
    given_seqs = clones(seqs)
    padded, lengths = unpack(impl.pad_sequences(given_seqs, padding_value))
    assert_arguments_unchanged(impl, what="seqs after the call (inputs must not change)")
    for i, (after, before) in enumerate(zip(given_seqs, seqs)):
        assert_same(after, before, what=f"seqs[{i}] after the call (inputs must not change)")
    assert_ordinary(lambda: padded, lambda: pad_sequence(seqs, batch_first=True, padding_value=padding_value),
                    what=f"padded (batch first, padding_value={padding_value})")
    assert_ordinary(lambda: lengths, lambda: torch.tensor([len(s) for s in seqs], dtype=torch.int64),
                    what="lengths")


@settings(max_examples=20)
@given(sequence_batches())
def test_empty_list_raises_value_error(impl, case):
    with ordinary_batch(impl, *case, "beside the empty list"):
        with expect_raises(ValueError, when="seqs is an empty list"):
            impl.pad_sequences([])


@st.composite
def mismatched_trailing_dims(draw) -> tuple[list[torch.Tensor], list[torch.Tensor], str]:
    """2-4 sequences whose trailing dims agree except one sequence's, which differs in one
    trailing dim (any of them) or in how many trailing dims it has; then the same batch
    with that sequence's trailing dims made to agree."""
    rest = list(draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), label="rest"))
    how = draw(st.sampled_from(["size", "more dims", "fewer dims"]), label="how")
    other = list(rest)
    if how == "size":
        d = draw(st.integers(0, len(rest) - 1), label="trailing dim that differs")
        # Size 1 where the others are larger: a copy into the batch would broadcast it.
        other[d] = draw(sampled((rest[d] + 1, rest[d] + 2, 1) if rest[d] > 1 else (2, 3)),
                        label="its size")
    elif how == "more dims":
        other.insert(draw(st.integers(0, len(rest)), label="where"), 2)
    else:
        del other[draw(st.integers(0, len(rest) - 1), label="dim dropped")]
    lengths = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4), label="lengths")
    odd = draw(st.integers(0, len(lengths) - 1), label="the odd sequence")
    good = [torch.randint(1, 10, (t, *rest)).double() for t in lengths]
    bad = [torch.randint(1, 10, (t, *other)).double() if i == odd else s
           for i, (t, s) in enumerate(zip(lengths, good))]
    return bad, good, f"sequence {odd} has trailing dims {tuple(other)}, the others {tuple(rest)}"


def _middle_dim_case(sizes: tuple[int, int]) -> tuple[list[torch.Tensor], list[torch.Tensor], str]:
    """Two sequences whose middle trailing dim differs (sizes[0] vs sizes[1]), the last agrees."""
    bad = [torch.arange(12.).reshape(2, 2, 3)[:, :sizes[0]], torch.full((1, sizes[1], 3), 7.0)]
    good = [bad[0], torch.full((1, sizes[0], 3), 7.0)]
    return bad, good, f"sequence 1 has trailing dims {(sizes[1], 3)}, sequence 0 {(sizes[0], 3)}"


@settings(max_examples=20)
@example(_middle_dim_case((2, 1)))  # a copy would broadcast sequence 1's size-1 dim silently
@example(_middle_dim_case((1, 2)))
@given(mismatched_trailing_dims())
def test_different_trailing_dims_raise_value_error(impl, case):
    seqs, good, why = case
    with ordinary_batch(impl, good, -1.0, "the same batch with matching trailing dims"):
        with expect_raises(ValueError, when=f"the trailing dims differ ({why})"):
            impl.pad_sequences(seqs)


@settings(max_examples=20)
@example(([torch.tensor([1., 2., 3.])], 0.0))
@example(([relaid(torch.arange(6.).reshape(3, 2), "permuted")], 0.0))
@given(sequence_batches())
def test_padded_shares_no_memory_with_a_sequence(impl, case):
    """A new tensor, even for one sequence (a view of it with a new batch dim would be
    the right values)."""
    seqs, padding_value = case
    given_seqs = clones(seqs)
    padded, lengths = unpack(impl.pad_sequences(given_seqs, padding_value))
    assert_no_shared_memory(padded, *given_seqs, what="padded")
    assert_ordinary(lambda: padded, lambda: pad_sequence(seqs, batch_first=True, padding_value=padding_value),
                    what=f"padded (batch first, padding_value={padding_value})")


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=25)
@given(sequence_batches(dtypes=[torch.float64]), st.sampled_from(GPU_DTYPES))
def test_reduced_precision_stays_on_gpu(impl, case, dtype):
    seqs, padding_value = case
    check_pad_sequences_on_device(impl.pad_sequences, seqs, padding_value, dtype, "cuda")


# ------------------------------------------------------------------ pad_one_hot

@pytest.mark.weight(3)
@settings(max_examples=50)
@example((relaid(F.one_hot(torch.tensor([2, 0, 1]), 3), "permuted"), 5))  # a transposed sequence
@example((torch.tensor([[0, 1, 0], [1, 0, 0]]), 4))  # the spec's example
@given(one_hot_sequences())
def test_pad_one_hot_appends_zero_rows(impl, case):
    sequence, target_length = case
    extra = target_length - sequence.shape[0]
    assert_same(impl.pad_one_hot(copy_in_layout(sequence), target_length),
                expected_pad_one_hot(sequence, target_length),
                what=f"pad_one_hot to {target_length} steps (the sequence, then {extra} zero rows)")


@settings(max_examples=20)
@example((F.one_hot(torch.tensor([1, 0]), 3), 2), True)
@given(one_hot_sequences(), st.booleans())
def test_pad_one_hot_returns_a_new_tensor(impl, case, same_length):
    """A new tensor, even when there is nothing to pad (target_length == T)."""
    sequence, target_length = case
    if same_length:
        target_length = sequence.shape[0]
    given_sequence = copy_in_layout(sequence)
    got = impl.pad_one_hot(given_sequence, target_length)
    assert_no_shared_memory(got, given_sequence, what=f"pad_one_hot(sequence, {target_length})")
    assert_ordinary(lambda: got, lambda: expected_pad_one_hot(sequence, target_length),
                    what=f"pad_one_hot to {target_length} steps")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(one_hot_sequences(), st.integers(1, 3))
def test_pad_one_hot_raises_when_target_is_shorter(impl, case, shortfall):
    sequence, target_length = case
    t = sequence.shape[0]
    with ordinary_one_hot(impl, sequence, target_length, "the same sequence, a valid length"):
        with expect_raises(ValueError, when=f"target_length {t - shortfall} < T = {t} "
                                            "(the padding would be negative)"):
            impl.pad_one_hot(copy_in_layout(sequence), t - shortfall)
