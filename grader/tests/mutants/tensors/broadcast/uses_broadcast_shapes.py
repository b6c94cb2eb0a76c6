"""Mistake: asks torch.broadcast_shapes (imported under another name) and reads the
strides off a real expand, instead of working them out."""

import torch
from torch.functional import broadcast_shapes as shapes_of

CAUGHT_BY = ("test_shape_matches_torch", "test_strides_match_expand")


def broadcast_shape(*shapes):
    try:
        return tuple(shapes_of(*shapes))
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def broadcast_strides(size, stride, target_shape):
    try:
        return tuple(torch.empty_strided(size, stride).expand(target_shape).stride())
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
