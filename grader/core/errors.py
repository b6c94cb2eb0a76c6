"""What a command reports when it cannot do what was asked, and its exit codes.

Every layer may raise ``UsageError``; ``grader.cli`` prints it as one sentence
(``torchdrill: ...``) and exits with ``EXIT_USAGE``.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_GRADER_FAILED = 3
EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped by Ctrl-C (128 + SIGINT)


class UsageError(Exception):
    """A problem with what the user asked for; printed as one clear sentence."""
