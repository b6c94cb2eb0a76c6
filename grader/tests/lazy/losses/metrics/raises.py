"""Do-nothing: every metric raises the spec's exception (ValueError) on every call."""


def iou(pred, target):
    raise ValueError("masks must be bool tensors of one shape")


def pearson(x, y):
    raise ValueError("x and y must have one shape and at least one element")


def mae(x, y):
    raise ValueError("x and y must have one shape and at least one element")
