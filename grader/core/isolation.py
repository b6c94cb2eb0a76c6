"""Where a submission's code runs: the one list of isolation modes."""

from __future__ import annotations

from enum import StrEnum


class Isolation(StrEnum):
    """``none``: in the grader's own process (a learner's own code only); ``process``:
    a clean worker process, unconfined; ``sandbox``: a confined worker process (for
    other people's code). Members equal their strings, as options and results hold them."""

    NONE = "none"
    PROCESS = "process"
    SANDBOX = "sandbox"


AUTO = "auto"  # a command's default: none for the course's own exercises/ and reference/, else sandbox
