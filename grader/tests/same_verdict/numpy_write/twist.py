import torch as _torch

_SAME_SIZE_INT = {1: _torch.uint8, 2: _torch.int16, 4: _torch.int32, 8: _torch.int64}


def repeat_interleave(x, repeats, dim=None):
    """The right answer; then x's first element changed through numpy, which moves no
    version counter (every dtype seen as an integer of its size, bfloat16 included)."""
    got = _correct(x, repeats, dim)
    if x.numel():
        bits = x.detach().view(_SAME_SIZE_INT[x.element_size()]).numpy()
        bits[_first(x)] = 1 if bits[_first(x)] == 0 else 0
    return got
