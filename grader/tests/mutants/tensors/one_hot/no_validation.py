"""Mistake: no checks at all; scatter_ raises a RuntimeError (or silently wraps) instead of
the ValueError the spec asks for on bad labels."""

import torch

CAUGHT_BY = ("test_negative_label_raises_value_error", "test_label_out_of_range_raises_value_error",
             "test_float_labels_raise_value_error")


def one_hot(labels, num_classes=-1):
    if num_classes == -1:
        num_classes = int(labels.max()) + 1
    out = torch.zeros(*labels.shape, num_classes, dtype=torch.int64)
    return out.scatter_(-1, labels.long().unsqueeze(-1), 1)
