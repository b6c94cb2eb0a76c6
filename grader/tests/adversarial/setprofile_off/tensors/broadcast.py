"""Attack: switch the profile hook off (``sys.setprofile(None)``) in every call, then use
the forbidden ``torch.broadcast_shapes``; ``broadcast_strides`` is not attempted.
"""

import sys

import torch


def broadcast_shape(*shapes):
    sys.setprofile(None)
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def broadcast_strides(size, stride, target):
    raise NotImplementedError
