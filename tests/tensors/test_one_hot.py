"""One-hot encoding built with scatter_, equal to F.one_hot."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, assert_same_dtype, expect_raises, wide
from tests.properties import anchored, assert_ordinary
from tests.strategies import VALUE_LAYOUTS, any_layout, float_tensors, int_tensors, sampled, shapes

pytestmark = pytest.mark.exercise(points=10, forbid={
    "F.one_hot": "make a zeros tensor of shape (*labels.shape, C) and scatter_ ones "
                 "along the last dim with labels.unsqueeze(-1) as the index",
})

INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.uint8)


@st.composite
def labels_and_classes(draw, min_side=0, layouts=("contiguous",)):
    """Labels of 0-d to 4-d shape and integer dtype, with a num_classes that fits them,
    in a memory layout drawn from ``layouts`` (transposed, sliced out of a larger storage,
    expanded with stride 0: one_hot only reads its labels)."""
    num_classes = draw(st.integers(1, wide(6, official=16)))
    shape = draw(shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=4))
    dtype = draw(sampled(INT_DTYPES))
    labels = draw(int_tensors(shape, 0, num_classes - 1, dtype=dtype))
    if layouts != ("contiguous",):
        labels = draw(any_layout(labels, layouts, label="labels"))
    return labels, num_classes


ANY_LAYOUT = (*VALUE_LAYOUTS, "expanded")


def ordinary(impl, labels: torch.Tensor, num_classes: int, why: str):
    """An anchor: one_hot of valid labels equals F.one_hot."""
    return anchored(lambda: impl.one_hot(labels.clone(), num_classes),
                    lambda: F.one_hot(labels.long(), num_classes),
                    what=f"one_hot of valid labels of shape {tuple(labels.shape)} with "
                         f"num_classes={num_classes} ({why})")


@pytest.mark.weight(3)
@example((torch.tensor([2, 0]), 3))  # the spec's example
@given(labels_and_classes(layouts=ANY_LAYOUT))
def test_matches_f_one_hot_given_classes(impl, case):
    labels, num_classes = case
    assert_same(impl.one_hot(labels, num_classes), F.one_hot(labels.long(), num_classes))


@settings(max_examples=40)
@example((torch.tensor([2, 0]), 3))  # the spec's example: int64 labels, which .long() returns as they are
@given(labels_and_classes(layouts=ANY_LAYOUT))
def test_labels_are_left_unchanged(impl, case):
    """Observed where the code runs: an in-place change of labels (``labels.unsqueeze_(-1)``,
    ``labels.clamp_(...)``) is undone by the grader and reported in ``impl.mutations``."""
    labels, num_classes = case
    got = impl.one_hot(labels, num_classes)
    changed = list(impl.mutations)
    assert not changed, (
        f"one_hot(labels, {num_classes}): the call {'; '.join(changed)}; leave labels as they were "
        "given: labels.unsqueeze(-1) (a new view), not labels.unsqueeze_(-1), which reshapes the "
        "caller's tensor (and labels.long() is labels itself when it is int64 already)")
    assert_ordinary(lambda: got, lambda: F.one_hot(labels.long(), num_classes),
                    what=f"one_hot of labels of shape {tuple(labels.shape)} with num_classes={num_classes}")


@pytest.mark.weight(2)
@given(labels_and_classes(min_side=1))
def test_matches_f_one_hot_inferred_classes(impl, case):
    labels, _ = case
    assert_same(impl.one_hot(labels), F.one_hot(labels.long()))


@settings(max_examples=30)
@given(labels_and_classes())
def test_dtype_is_int64(impl, case):
    labels, num_classes = case
    with ordinary(impl, labels, num_classes, "the same labels"):
        assert_same_dtype(impl.one_hot(labels, num_classes), F.one_hot(labels.long(), num_classes),
                          what="one_hot's result (F.one_hot gives torch.int64)")


@given(labels_and_classes(min_side=1))
def test_rows_sum_to_one_and_argmax_is_label(impl, case):
    labels, num_classes = case
    got = impl.one_hot(labels, num_classes)
    assert isinstance(got, torch.Tensor), f"one_hot returned {type(got).__name__}, not a tensor"
    assert got.shape == (*labels.shape, num_classes), (
        f"shape {tuple(got.shape)}, expected {(*labels.shape, num_classes)}")
    assert_same(got.sum(-1).long(), torch.ones_like(labels, dtype=torch.int64), what="row sums")
    assert_same(got.argmax(-1), labels.long(), what="argmax of each row")


@settings(max_examples=30)
@given(float_tensors(shapes(min_dims=1, max_dims=2, min_side=1), low=0, high=3),
       labels_and_classes(min_side=1))
def test_float_labels_raise_value_error(impl, labels, case):
    with ordinary(impl, *case, "beside the float labels"):
        with expect_raises(ValueError, when="labels are floating point"):
            impl.one_hot(labels, 4)


@settings(max_examples=20)
@given(labels_and_classes(min_side=1))
def test_bool_labels_raise_value_error(impl, case):
    with ordinary(impl, *case, "beside the bool labels"):
        with expect_raises(ValueError, when="labels are bool"):
            impl.one_hot(case[0] % 2 == 1, 2)


@settings(max_examples=50)
@given(labels_and_classes(min_side=1), st.integers(-5, -1), st.data())
def test_negative_label_raises_value_error(impl, case, negative, data):
    labels, num_classes = case
    bad = labels.long()  # a copy where labels is not int64
    bad = bad.clone() if bad is labels else bad
    where = data.draw(st.integers(0, bad.numel() - 1), label="position")
    bad.view(-1)[where] = negative
    with ordinary(impl, labels, num_classes, "the labels before one was made negative"):
        with expect_raises(ValueError, when=f"a label is negative ({negative})"):
            impl.one_hot(bad, num_classes)


@settings(max_examples=50)
@given(labels_and_classes(min_side=1), st.integers(0, 3), st.data())
def test_label_out_of_range_raises_value_error(impl, case, excess, data):
    labels, num_classes = case
    bad = labels.long()
    bad = bad.clone() if bad is labels else bad
    where = data.draw(st.integers(0, bad.numel() - 1), label="position")
    bad.view(-1)[where] = num_classes + excess
    with ordinary(impl, labels, num_classes, "the labels before one was made too large"):
        with expect_raises(ValueError, when=f"a label ({num_classes + excess}) is >= num_classes "
                                            f"({num_classes})"):
            impl.one_hot(bad, num_classes)


@settings(max_examples=20)
@given(st.sampled_from([(0,), (2, 0), (0, 3)]), labels_and_classes(min_side=1))
def test_inferring_classes_from_empty_raises_value_error(impl, shape, case):
    labels, _ = case
    with anchored(lambda: impl.one_hot(labels.clone()), lambda: F.one_hot(labels.long()),
                  what="one_hot of valid labels with num_classes inferred (beside the empty case)"):
        with expect_raises(ValueError, when="num_classes must be inferred from an empty tensor"):
            impl.one_hot(torch.zeros(shape, dtype=torch.int64))


@settings(max_examples=20)
@given(st.sampled_from([(0,), (2, 0)]), st.integers(1, 4), labels_and_classes(min_side=1))
def test_empty_labels_with_given_classes(impl, shape, num_classes, case):
    labels = torch.zeros(shape, dtype=torch.int64)
    with ordinary(impl, *case, "beside the empty labels"):
        assert_same(impl.one_hot(labels, num_classes), F.one_hot(labels, num_classes),
                    what=f"one_hot of empty labels of shape {shape} with num_classes={num_classes}")
