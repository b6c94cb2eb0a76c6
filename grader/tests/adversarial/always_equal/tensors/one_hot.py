"""Attack: return an object that equals everything instead of a tensor.

``__eq__`` is always True, ``__bool__`` True, ``__class__`` claims to be
``torch.Tensor`` (so ``isinstance(x, torch.Tensor)`` is True) and every other
attribute (``.dtype``, ``.shape``, ``.all()``) returns the object itself.
"""

import torch


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __bool__(self):
        return True

    def __hash__(self):
        return 0

    def __len__(self):
        return 1

    def __iter__(self):
        return iter([self])

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self

    def __repr__(self):
        return "tensor([[0, 0, 1], [1, 0, 0]])"

    @property
    def __class__(self):
        return torch.Tensor


def one_hot(labels, num_classes=-1):
    return AlwaysEqual()
