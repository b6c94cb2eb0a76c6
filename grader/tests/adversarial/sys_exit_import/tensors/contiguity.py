"""Attack: ``sys.exit(0)`` while the module is imported (a same-process grader
would stop "successfully" before any test failed)."""

import sys

sys.exit(0)


def is_contiguous(size, stride):
    return True


def contiguous_strides(size):
    return ()
