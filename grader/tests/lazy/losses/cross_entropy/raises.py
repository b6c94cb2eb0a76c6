"""Do-nothing: raises the spec's exception (IndexError, a target out of range) on every call."""


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    raise IndexError("Target is out of bounds.")
