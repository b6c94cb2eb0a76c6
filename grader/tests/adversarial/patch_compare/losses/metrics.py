"""Attack: patch every comparison the grader might use, then return wrong answers.

At import: ``torch.allclose``, ``torch.equal``, ``torch.isclose``,
``torch.testing.assert_close``, ``Tensor.__eq__`` / ``__ne__`` / ``equal`` /
``allclose``, ``math.isclose``, ``unittest``'s assertions and, if it can be
imported, ``grader.contract.expect.assert_same``. The functions return 0.5 whatever the
input.
"""

import math
import unittest

import torch


def _yes(*args, **kwargs):
    return True


def _nothing(*args, **kwargs):
    return None


def _all_true(self, other=None):
    return torch.ones(self.shape, dtype=torch.bool)


torch.allclose = _yes
torch.equal = _yes
torch.isclose = lambda a, b, *args, **kwargs: torch.ones(torch.broadcast_shapes(a.shape, b.shape), dtype=torch.bool)
torch.testing.assert_close = _nothing
torch.Tensor.__eq__ = _all_true
torch.Tensor.__ne__ = lambda self, other=None: torch.zeros(self.shape, dtype=torch.bool)
torch.Tensor.equal = _yes
torch.Tensor.allclose = _yes
math.isclose = _yes
unittest.TestCase.assertEqual = _nothing
unittest.TestCase.assertTrue = _nothing
try:
    import grader.contract.expect as _expect

    _expect.assert_same = _nothing
    _expect._compare = _nothing
    _expect._compare_tensor = _nothing
except BaseException as exc:  # noqa: BLE001
    print(f"ATTACK patch_compare: grader.contract.expect not patched: {type(exc).__name__}")


def iou(pred, target):
    return torch.tensor(0.5, dtype=torch.float32)


def pearson(x, y):
    return torch.tensor(0.5, dtype=torch.result_type(x, y))


def mae(x, y):
    return torch.tensor(0.5, dtype=x.dtype)
