"""Mistake: calls the forbidden F.one_hot instead of building the encoding with scatter_."""

import torch
import torch.nn.functional as F

CAUGHT_BY = ("test_matches_f_one_hot_given_classes", "test_dtype_is_int64")


def one_hot(labels, num_classes=-1):
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise ValueError("labels must be integers")
    try:
        return F.one_hot(labels.long(), num_classes)
    except RuntimeError as exc:  # the guard's refusal is swallowed here: it must not help
        raise ValueError(str(exc)) from None
