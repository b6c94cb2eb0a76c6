"""The course's gradient checks name the real mistake (``tests/numerics.py``).

A float32 answer to a float64 question was reported as a gradient 19 times off: the
weights of the weighted sum were drawn in the output's dtype, so they were other
numbers than the oracle's. Now the weights are the same numbers in every dtype, and
an output in the wrong dtype is reported as that.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.numerics import manual_seed, random_weights, weighted_grads


def test_the_weights_are_the_same_numbers_in_every_dtype():
    out = torch.zeros(3, 4, dtype=torch.float64)
    manual_seed(1)
    wide = random_weights(out)
    manual_seed(1)
    narrow = random_weights(out.float())
    assert narrow.dtype == torch.float32 and torch.equal(narrow, wide.float())


def test_an_output_in_another_dtype_is_named_as_such():
    x = torch.randn(1, 1, 5, 5, dtype=torch.float64, requires_grad=True)
    k = torch.randn(1, 1, 3, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="the output's dtype is torch.float32, the inputs' torch.float64"):
        weighted_grads(lambda a, b: F.conv2d(a.float(), b.float()), [x, k])
    got = weighted_grads(F.conv2d, [x, k])
    assert [None if g is None else g.dtype for g in got] == [torch.float64, torch.float64]
