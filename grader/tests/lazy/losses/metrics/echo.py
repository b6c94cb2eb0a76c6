"""Do-nothing: every metric returns its first input."""


def iou(pred, target):
    return pred


def pearson(x, y):
    return x


def mae(x, y):
    return x
