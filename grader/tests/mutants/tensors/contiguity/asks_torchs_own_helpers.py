"""Mistake: hands the numbers to torch's own Python helpers (sympy_is_contiguous from
torch.fx, make_contiguous_strides_for from torch._prims_common) instead of walking the
dims: the routes `torchdrill audit` found, which answer every example right."""

from torch._prims_common import make_contiguous_strides_for
from torch.fx.experimental.sym_node import sympy_is_contiguous

CAUGHT_BY = ("test_agrees_with_torch_on_layouts", "test_strides_match_torch_empty")


def is_contiguous(size, stride):
    if len(size) != len(stride) or any(n < 0 for n in size):
        raise ValueError(f"bad size {size} or stride {stride}")
    return bool(sympy_is_contiguous(tuple(size), tuple(stride)))


def contiguous_strides(size):
    if any(n < 0 for n in size):
        raise ValueError(f"sizes must be non-negative, got {size}")
    return tuple(make_contiguous_strides_for(tuple(size)))
