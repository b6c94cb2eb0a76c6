"""The ``torchdrill`` program (and ``python -m grader``): a ``check`` goes to the learner's
warm process when one runs (``grader.learner.warm``), before the command line and its
commands are loaded; everything else, and a ``check`` nobody serves, to ``grader.cli``."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["check"]:
        from grader.learner import warm

        served = warm.served(sys.argv[1:])
        if served is not None:
            return served
        warm.start()  # for the next one; this one runs here
    from grader.cli import main as command_line

    return command_line()


if __name__ == "__main__":
    sys.exit(main())
