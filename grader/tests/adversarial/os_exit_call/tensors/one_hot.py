"""Attack: ``os._exit(0)`` inside the call: the worker dies mid-request with
status 0 and no answer."""

import os


def one_hot(labels, num_classes=-1):
    os._exit(0)
