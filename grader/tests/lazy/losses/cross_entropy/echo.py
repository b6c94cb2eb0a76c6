"""Do-nothing: returns the logits it was given."""


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    return logits
