"""What a command reports when it cannot do what was asked, and its exit code.

Every error a user can meet derives from ``TorchdrillError`` and carries its exit
code; ``grader.cli`` prints it as one sentence (``torchdrill: ...``) and exits
with that code, so no command translates errors into exit codes by hand:

- ``UsageError`` (2): what was asked cannot be done as asked (a missing folder,
  an unknown drill, a bad course.toml, a submission that cannot be read).
- ``GraderFailed`` (3): the grader itself could not grade (a broken test file, a
  sandbox that would not start, a grading process that died). Never a student's
  zero: no results are written.
- ``GradingInterrupted`` (130): Ctrl-C stopped a grading; nothing was recorded.

The outcomes of one call of student code (``grader.core.outcomes``: not attempted,
timed out, a broken contract) are not errors of a command: they become verdicts.
"""

from __future__ import annotations

from grader.core.i18n import N_, _

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_GRADER_FAILED = 3
EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped by Ctrl-C (128 + SIGINT)


class TorchdrillError(Exception):
    """A command could not do what was asked; ``exit_code`` is what it exits with."""

    exit_code = EXIT_USAGE
    # the kind of failure around the message (``{message}``), where the message alone
    # does not say it: a gettext message, in the language of the running command
    prefix = ""

    def sentence(self) -> str:
        return _(self.prefix, message=str(self)) if self.prefix else str(self)


class UsageError(TorchdrillError):
    """A problem with what the user asked for; printed as one clear sentence."""


class NotGradable(UsageError):
    """A submission that cannot be graded as handed in; the sentence says what was
    found where (a student's problem, reported per entry in a class)."""


class GraderFailed(TorchdrillError):
    """Grading itself did not work (not a low score: the grader could not grade)."""

    exit_code = EXIT_GRADER_FAILED
    prefix = N_("grading failed: {message}")


class GradingInterrupted(GraderFailed):
    """Ctrl-C stopped pytest before it finished grading."""

    exit_code = EXIT_INTERRUPTED
    prefix = ""
