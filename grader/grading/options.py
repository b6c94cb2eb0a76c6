"""The grading options, declared once for the pytest plugin and the command line.

``torchdrill grade`` and ``grade-all`` parse them with argparse and hand them to
pytest; the plugin declares the very same options to pytest. Each ``Option``
below is the one definition of a flag: its type, default, choices and help.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader.core.i18n import N_, _
from grader.core.isolation import AUTO, Isolation
from grader.core.time_budgets import DEFAULT_CALL_TIMEOUT_S
from grader.grading.request import DEFAULT_TEST_TIMEOUT_S, Limits

LAYERS = ("bwrap", "uid", "landlock", "seccomp", "rlimits")


def seconds(text: str) -> float:
    """A number of seconds, 0 or more (0: no limit), for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("{text} is not a number of seconds", text=repr(text))) from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(_("{text}: a number of seconds is 0 (no limit) or more", text=text))
    return value


def budget_seconds(text: str) -> float:
    """A drill budget in seconds, more than 0, for argparse."""
    value = seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(_("a drill budget of 0 s would stop every property before it ran: "
                                           "give more than 0 seconds"))
    return value


@dataclass(frozen=True)
class Option:
    flag: str
    help: str  # a gettext message; ``help_params`` fill its placeholders
    type: Callable[[str], Any] | None = None
    default: Any = None
    choices: tuple[str, ...] | None = None
    action: str | None = None
    metavar: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    help_params: dict[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def keywords(self) -> dict[str, Any]:
        """The keyword arguments both argparse and pytest's ``addoption`` take."""
        kw: dict[str, Any] = {"help": _(self.help, **self.help_params), "default": self.default}
        for name in ("type", "choices", "action", "metavar"):
            value = getattr(self, name)
            if value is not None:
                kw[name] = list(value) if name == "choices" else value
        return kw | self.extra



ISOLATION = Option(
    "--isolation", choices=tuple(i.value for i in Isolation), default=Isolation.NONE.value,
    help=N_("where the submission's code runs. sandbox: a confined worker process per exercise "
            "(namespaces, dropped uid, Landlock, seccomp, rlimits: for other people's code); "
            "process: a clean worker process, unconfined; none: in the grader (fast to debug; "
            "your own code only)"))
SANDBOX_OFF = Option(
    "--sandbox-off", action="append", default=None, metavar="LAYER", choices=LAYERS,
    help=N_("switch one confinement layer off (repeatable; also the environment variable "
            "TORCHDRILL_SANDBOX_OFF=bwrap,landlock); results.json and the report say which "
            "layers ran"))
CALL_TIMEOUT = Option(
    "--call-timeout", type=seconds, default=DEFAULT_CALL_TIMEOUT_S, metavar="SECONDS",
    help=N_("wall-clock limit per call of the submission's code (default {seconds}; "
            "0: none); the property that hit it is 'timed out' with the input it was given. In a "
            "worker, after 2 timeouts a function's remaining tests are 'timed out' without calling it"),
    help_params={"seconds": f"{DEFAULT_CALL_TIMEOUT_S:g}"})
TEST_TIMEOUT = Option(
    "--test-timeout", type=seconds, default=DEFAULT_TEST_TIMEOUT_S, metavar="SECONDS",
    help=N_("wall-clock limit per test; past it the test is 'timed out' (default {seconds}; 0: none, "
            "the drill's budget still holds)"),
    help_params={"seconds": f"{DEFAULT_TEST_TIMEOUT_S:g}"})
DRILL_BUDGET = Option(
    "--drill-budget", type=budget_seconds, default=None, metavar="SECONDS",
    help=N_("time budget per drill, charging the time the submission runs or sleeps but not the "
            "time it waits for a CPU (so a busy machine does not spend it), past which its remaining "
            "properties are 'timed out' (default: 10 times the reference's time on the drill's tests "
            "plus 30 s, from tests/reference_times.json; 180 s for a drill with no time recorded)"))
NO_SHRINK = Option(
    "--no-shrink", action="store_true", default=False,
    help=N_("skip hypothesis' shrinking: the same scores, sooner, but counterexamples are the "
            "first failing inputs found, not the smallest"))

SECRET_FILE = Option(
    "--secret-file", metavar="FILE",
    help=N_("the course secret (one line; `torchdrill secret` makes one): an official grading, "
            "whose examples no student has seen and whose ranges are wider than the public "
            "tests'. Also the environment variable TORCHDRILL_SECRET (the secret itself). "
            "results.json records its digest, never the secret"))
PUBLIC_EXAMPLES = Option(
    "--public-examples", action="store_true", default=False,
    help=N_("draw the public examples every learner can replay, even where a secret is given "
            "(check always does)"))

# What ``grade`` and ``grade-all`` pass on to the plugin, in this order.
GRADING: tuple[Option, ...] = (ISOLATION, SANDBOX_OFF, CALL_TIMEOUT, TEST_TIMEOUT, DRILL_BUDGET, NO_SHRINK,
                               SECRET_FILE, PUBLIC_EXAMPLES)

# The plugin's own options, which only a direct pytest run gives by hand.
SUBMISSION = Option("--submission", metavar="DIR", help=N_(
    "folder laid out like exercises/ to grade (default: exercises/ beside the tests folder)"))
REFERENCE_DIR = Option("--reference-dir", metavar="DIR", help=N_(
    "the reference solutions (default: reference/ beside the tests folder)"))
RESULTS = Option("--results", metavar="FILE", help=N_("write the grading results (JSON) to FILE"))
PLUGIN: tuple[Option, ...] = (SUBMISSION, REFERENCE_DIR, RESULTS, *GRADING)

PROFILES = ("torchdrill", "torchdrill-quick")


def add_to_pytest(group: Any) -> None:
    """Declare every option of the plugin in pytest's option group."""
    for option in PLUGIN:
        group.addoption(option.flag, dest=option.dest, **option.keywords())


def add_to_parser(parser: argparse.ArgumentParser, isolation_default: str,
                  isolation_help: str) -> None:
    """The options ``grade`` and ``grade-all`` share: how tests run, where code runs.

    On the command line, ``--isolation`` may default to ``auto`` (``grade``: in-process
    for the course's own folders, sandboxed for others) or to ``sandbox`` (``grade-all``).
    """
    parser.add_argument("--profile", choices=list(PROFILES), default=None,
                        help=_("hypothesis profile (default torchdrill: 100 examples per property)"))
    parser.add_argument("--course", metavar="DIR", help=_("course folder holding tests/ (default: "
                                                          "found from the current folder upwards)"))
    for option in GRADING:
        kw = option.keywords()
        if option is ISOLATION:
            choices = [*(i.value for i in Isolation), *([AUTO] if isolation_default == AUTO else [])]
            kw |= {"choices": choices, "default": isolation_default, "help": isolation_help}
        else:
            kw["default"] = None if option.action is None else kw["default"]  # the plugin's default
        parser.add_argument(option.flag, dest=option.dest, **kw)


def limits(values: argparse.Namespace) -> Limits:
    """The limits ``add_to_parser`` parsed (an option not given: its default)."""
    def given(option: Option) -> Any:
        value = getattr(values, option.dest, None)
        return option.default if value is None else value

    return Limits(call_s=given(CALL_TIMEOUT), test_s=given(TEST_TIMEOUT), drill_budget_s=given(DRILL_BUDGET))
