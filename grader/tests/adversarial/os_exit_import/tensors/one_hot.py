"""Attack: ``os._exit(0)`` while the module is imported: the process ends at once,
with status 0, without unwinding (no ``finally``, no ``atexit``)."""

import os

os._exit(0)


def one_hot(labels, num_classes=-1):
    return labels
