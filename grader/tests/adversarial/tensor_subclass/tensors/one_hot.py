"""Attack: a torch.Tensor subclass that lies.

Its data are zeros (a wrong one-hot), but ``__eq__`` says all-equal,
``__torch_function__`` answers True for ``allclose`` / ``equal`` / ``isclose``
and friends, and its ``dtype`` and ``shape`` properties claim to be what the
test expects while the storage is float32.
"""

import torch

_LIES = {"allclose", "equal", "isclose", "eq", "__eq__", "ne", "__ne__", "all", "any"}


class Liar(torch.Tensor):
    claimed_shape = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal"):
            return True
        if name in ("isclose", "eq", "__eq__"):
            return torch.ones(1, dtype=torch.bool).as_subclass(Liar)
        if name in ("ne", "__ne__"):
            return torch.zeros(1, dtype=torch.bool).as_subclass(Liar)
        if name in ("all", "any"):
            return torch.tensor(True)
        return super().__torch_function__(func, types, args, kwargs or {})

    def __eq__(self, other):
        return torch.ones(1, dtype=torch.bool).as_subclass(Liar)

    def __ne__(self, other):
        return torch.zeros(1, dtype=torch.bool).as_subclass(Liar)

    def __bool__(self):
        return True

    @property
    def dtype(self):
        return torch.int64


def one_hot(labels, num_classes=-1):
    if num_classes == -1:
        num_classes = int(labels.max()) + 1 if labels.numel() else 1
    return torch.zeros(*labels.shape, num_classes, dtype=torch.float32).as_subclass(Liar)
