"""Do-nothing: returns the labels as they came."""


def one_hot(labels, num_classes=-1):
    return labels
