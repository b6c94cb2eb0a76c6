"""Pad variable-length sequences batch-first (with lengths) and one-hot sequences to a length."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.utils.rnn import pad_sequence

from grader.contract.expect import assert_same, expect_raises
from tests.strategies import shapes

_INSTEAD = ("allocate the (B, T_max, *rest) result with torch.full(..., padding_value, "
            "dtype=..., device=...) and copy each sequence into the front of its row")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.nn.utils.rnn.pad_sequence": _INSTEAD,
    # the kernel behind pad_sequence (and pack_sequence): what the guard sees
    "torch._C._nn.pad_sequence": "that is the kernel of torch.nn.utils.rnn.pad_sequence, "
                                 "forbidden here: " + _INSTEAD,
})

DTYPES = [torch.float64, torch.float32, torch.int64]
# Reduced precision on the GPU: padding only copies values, so results are exact.
GPU_DTYPES = [torch.float32, torch.float16, torch.bfloat16]


# ------------------------------------------------------------------ strategies

@st.composite
def sequence_batches(draw, dtypes=DTYPES) -> tuple[list[torch.Tensor], float]:
    """(seqs, padding_value): 1-4 sequences (T_i, *rest), T_i in 0..5, 0-2 trailing dims.

    Only the structure is drawn (it is what shrinks); the values are small integers
    from torch's generator, reseeded per example. Integer sequences get an
    integer-valued padding value (as a float, like the default)."""
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    rest = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), label="rest")
    lengths = draw(st.lists(st.integers(0, 5), min_size=1, max_size=4), label="lengths")
    seqs = [torch.randint(1, 10, (t, *rest)).to(dtype) for t in lengths]
    if dtype.is_floating_point:
        padding_value = draw(st.floats(-10, 10, width=16), label="padding_value")
    else:
        padding_value = float(draw(st.integers(-9, 9), label="padding_value"))
    return seqs, padding_value


@st.composite
def one_hot_sequences(draw) -> tuple[torch.Tensor, int]:
    """(sequence, target_length): an F.one_hot (T, C) sequence, int64 or float32, T in 0..5."""
    t, c = draw(st.integers(0, 5), label="T"), draw(st.integers(1, 5), label="C")
    dtype = draw(st.sampled_from([torch.int64, torch.float32]), label="dtype")
    target_length = t + draw(st.integers(0, 4), label="target_length - T")
    return F.one_hot(torch.randint(0, c, (t,)), c).to(dtype), target_length


# ------------------------------------------------------------------ helpers

def clones(seqs: list[torch.Tensor]) -> list[torch.Tensor]:
    return [s.clone() for s in seqs]


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
    _, lengths = unpack(impl.pad_sequences(clones(seqs), padding_value))
    assert_same(lengths, torch.tensor([len(s) for s in seqs], dtype=torch.int64),
                what="lengths (a 1-D int64 tensor of every T_i)")


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
    impl.pad_sequences(given_seqs, padding_value)
    for i, (after, before) in enumerate(zip(given_seqs, seqs)):
        assert_same(after, before, what=f"seqs[{i}] after the call (inputs must not change)")


def test_empty_list_raises_value_error(impl):
    with expect_raises(ValueError, when="seqs is an empty list"):
        impl.pad_sequences([])


@settings(max_examples=20)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_different_trailing_dims_raise_value_error(impl, t0, t1, d0, extra):
    seqs = [torch.zeros(t0, d0), torch.zeros(t1, d0 + extra)]
    with expect_raises(ValueError, when=f"the trailing dims differ ({d0} and {d0 + extra})"):
        impl.pad_sequences(seqs)


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
@given(one_hot_sequences())
def test_pad_one_hot_appends_zero_rows(impl, case):
    sequence, target_length = case
    extra = target_length - sequence.shape[0]
    expected = torch.cat([sequence, sequence.new_zeros(extra, sequence.shape[1])])
    assert_same(impl.pad_one_hot(sequence.clone(), target_length), expected,
                what=f"pad_one_hot to {target_length} steps (the sequence, then {extra} zero rows)")


@pytest.mark.weight(2)
@settings(max_examples=30)
@given(one_hot_sequences(), st.integers(1, 3))
def test_pad_one_hot_raises_when_target_is_shorter(impl, case, shortfall):
    sequence, _ = case
    t = sequence.shape[0]
    with expect_raises(ValueError, when=f"target_length {t - shortfall} < T = {t} "
                                        "(the padding would be negative)"):
        impl.pad_one_hot(sequence, t - shortfall)
