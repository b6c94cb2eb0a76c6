"""``torchdrill secret``: make the course secret an instructor keeps for official gradings.

The secret seeds every property's examples in ``grade-all``, the Gradescope
autograder and ``grade --secret-file`` (``grader.core.course_secret``). It is made once
per course and kept: a new secret draws new examples, so earlier official
gradings could no longer be reproduced with it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.core import course_secret
from grader.core.errors import EXIT_OK


def cmd_secret(args: argparse.Namespace) -> int:
    path = Path(args.out) if args.out else course_secret.default_path()
    made = course_secret.create(path)
    print(f"course secret: {path} (readable by you only; digest {made.digest})")
    print("keep it out of the course repository and out of every release; grade-all and "
          "gradescope-autograder find it there, `torchdrill grade --secret-file` and "
          f"${course_secret.ENV} take it anywhere. Back it up: the official examples come from it.")
    return EXIT_OK
