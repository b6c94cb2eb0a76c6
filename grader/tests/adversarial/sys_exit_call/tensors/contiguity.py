"""Attack: end the process from inside a call, politely.

``is_contiguous`` raises ``KeyboardInterrupt`` (an in-process grader treats it as
the user pressing Ctrl-C and stops grading); ``contiguous_strides`` calls
``sys.exit(0)``.
"""

import sys


def is_contiguous(size, stride):
    raise KeyboardInterrupt


def contiguous_strides(size):
    sys.exit(0)
