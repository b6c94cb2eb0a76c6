"""Attack: change the arguments where torch's version counters do not look.

Writes into ``x`` (or a ``repeats`` tensor) through ``.numpy()``, which moves no
version counter, then answers with the wrong shape. A worker that judged "unchanged"
by version counters would report the arguments untouched, and "the inputs are left
unchanged" would lose only on the values; the grader compares every argument's bytes
with its own copy, so the property fails on the change itself, as it does in-process.
"""

import torch

_SAME_SIZE_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _flip_first(t):
    """Change ``t``'s first element through numpy (seen as an integer of its size)."""
    if not isinstance(t, torch.Tensor) or not t.numel():
        return
    bits = t.detach().view(_SAME_SIZE_INT[t.element_size()]).numpy()
    first = (0,) * t.dim()
    bits[first] = 1 if bits[first] == 0 else 0


def repeat_interleave(x, repeats, dim=None):
    _flip_first(x)
    _flip_first(repeats)
    return x.detach().clone().unsqueeze(0).unsqueeze(0)
