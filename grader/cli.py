"""``torchdrill``: the command line. It parses arguments and calls the command.

Every command lives in the layer it belongs to (``grader.grading.commands``:
``grade``, ``report``; ``grader.learner``: ``list``, ``check``, ``watch``, ``hint``, ``stubs``;
``grader.authoring``: ``release``, ``secret``;
``grader.gradescope.autograder``: ``gradescope-autograder``;
``grader.classroom.classgrade``: ``grade-all``, ``merge``;
``grader.classroom.term_commands``: ``extend``, ``override``) as a
``cmd_*`` function of the parsed arguments returning the exit code. This module
is the top of the package: nothing imports it. It also hands Gradescope's results
writers (``grader.gradescope.results``) to the commands that write them with
``--format gradescope``, whose rooms may not import Gradescope's: ``grade`` and
``report`` (``write_gradescope``), and the class commands (``write_gradescope_class``).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import grader
from grader.classroom import similarity
from grader.core import i18n, syllabus
from grader.core.errors import EXIT_INTERRUPTED, TorchdrillError, UsageError
from grader.core.i18n import N_, _
from grader.gradescope import autograder
from grader.grading import commands, options
from grader.learner import check, hint, listing, stub_language, watch


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="torchdrill", formatter_class=_Formatter,
        description=_("PyTorch drills graded by property tests: grade a submission, "
                      "see the score of every property and the smallest input that breaks it."))
    parser.add_argument("--version", action="version", version=f"torchdrill {grader.__version__}")
    _lang_option(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _grade(sub)
    _report(sub)
    _learner(sub)
    _release(sub)
    _grade_all(sub)
    _merge(sub)
    _extend(sub)
    _override(sub)
    _gradescope_autograder(sub)
    _secret(sub)
    _audit(sub)
    for command in sub.choices.values():
        _lang_option(command)
    for p in (parser, *sub.choices.values()):
        _speak_argparse(p)
    return parser


class _Formatter(argparse.HelpFormatter):
    """argparse's help, its own words in the command's language, and text with wide
    characters (Chinese) wrapped at the terminal's width in cells (argparse wraps at
    spaces only). English as argparse writes it."""

    def add_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                  groups: Iterable[argparse._MutuallyExclusiveGroup], prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not hint.has_wide(text):
            return super()._split_lines(text, width)
        return hint.fill(" ".join(text.split()), width).splitlines()

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not hint.has_wide(text):
            return super()._fill_text(text, width, indent)
        return hint.fill(" ".join(text.split()), width, indent, indent)


# argparse's own errors (its English, from its own gettext), as whole sentences of ours:
# each message read back from argparse's words, its {names} matching anything.
_ARGPARSE_ERRORS = (
    N_("the following arguments are required: {names}"),
    N_("unrecognized arguments: {names}"),
    N_("argument {option}: invalid choice: {value} (choose from {choices})"),
    N_("argument {option}: expected one argument"),
    N_("argument {option}: expected at least one argument"),
    N_("argument {option}: invalid {type} value: {value}"),
    N_("argument {option}: not allowed with argument {other}"),
    N_("one of the arguments {names} is required"),
)


def _pattern(msgid: str) -> re.Pattern[str]:
    """``msgid``'s English as a pattern, each ``{name}`` a group of its own."""
    parts = re.split(r"\{(\w+)\}", msgid)
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*?)" for i, p in enumerate(parts)),
                      re.S)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors in the command's language (English: argparse's own)."""

    def error(self, message: str) -> NoReturn:
        if i18n.current().lang is i18n.Lang.EN:
            super().error(message)
        for sentence in _ARGPARSE_ERRORS:
            found = _pattern(sentence).fullmatch(message)
            if found:
                message = _(sentence, **found.groupdict())
                break
        self.print_usage(sys.stderr)
        self.exit(2, _("{prog}: error: {message}", prog=self.prog, message=message) + "\n")


def _speak_argparse(p: argparse.ArgumentParser) -> None:
    """The words argparse writes itself in every parser's help, in the command's language."""
    p.formatter_class = _Formatter
    p._positionals.title = _("positional arguments")
    p._optionals.title = _("options")
    for action in p._actions:
        if isinstance(action, argparse._HelpAction):
            action.help = _("show this help message and exit")
        elif isinstance(action, argparse._VersionAction):
            action.help = _("show program's version number and exit")


def _lang_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", metavar="LANG", default=argparse.SUPPRESS,
                   help=_("the language of messages, reports and stubs: {langs} (default: "
                          "${env}, then the course's language, then the locale)",
                          langs=", ".join(i18n.Lang), env=i18n.LANG_ENV))


def chosen_lang(argv: list[str]) -> i18n.Lang:
    """The language the command speaks, known before its parser is built (the help is
    in it too): ``--lang`` wherever it is, then ``i18n.choose``'s order, the course's
    default read from ``--course DIR`` where it is given, else from the current folder's."""
    flag, course = _option(argv, "--lang"), _option(argv, "--course")
    try:
        root = Path(course).resolve() if course else syllabus.find_course(Path.cwd())
        default = syllabus.load(root).language
    except (TorchdrillError, OSError):
        default = None  # outside a course, or a course.toml the command itself will report
    return i18n.choose(flag, default)


class _Later:
    """``module.name``, imported when it is called: a command loads its own room only
    (``check`` does not import the class commands, the audit or Gradescope's writers)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.name)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


def _option(argv: list[str], name: str) -> str | None:
    """The last value of option ``name`` in ``argv`` (``--name VALUE`` or ``--name=VALUE``)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(name + "="):
            found = arg.split("=", 1)[1]
    return found


def main(argv: list[str] | None = None) -> int:
    """The ``torchdrill`` command (``argv``: its arguments; None: this program's own)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        lang = chosen_lang(argv)
    except i18n.UnknownLanguage as exc:
        print(f"torchdrill: {exc}", file=sys.stderr)
        return UsageError.exit_code
    with i18n.speaking(lang):
        args = build_parser().parse_args(argv)
        args.lang = lang  # every command reads the language it speaks from here, and only here
        try:
            return int(args.run(args))
        except TorchdrillError as exc:
            print(f"torchdrill: {exc.sentence()}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print(_("torchdrill: interrupted"), file=sys.stderr)
            return EXIT_INTERRUPTED


# ------------------------------------------------------------------ grading one submission

def _grade(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("grade", help=_("grade one submission: a folder, a zip, a notebook or a drill's file"),
                       description=_("Grade one submission: a folder laid out like exercises/ (or a "
                                     "handout folder), a .zip of one, a Jupyter notebook, or drill "
                                     "files named after their drill (one_hot.py). Exits 0 whenever "
                                     "grading worked, whatever the score."))
    g.add_argument("submission", nargs="?", default="exercises",
                   help=_("what to grade (default: exercises; 'reference' grades the reference). A "
                          "notebook's cells are read, never run here; anything but this course's own "
                          "folders is graded in the sandbox"))
    g.add_argument("--out", metavar="DIR", help=_("where results.json goes (default: reports/)"))
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help=_("grade only these exercises, e.g. tensors/one_hot (their results replace those "
                          "exercises' earlier ones in results.json; the others are kept)"))
    g.add_argument("-n", "--workers", type=int, default=0, metavar="N",
                   help=_("spread the tests over N processes (pytest-xdist; default 0: this process)"))
    options.add_to_parser(g, isolation_default="auto", isolation_help=(
        _("where the submission's code runs. sandbox: a confined worker process per exercise "
          "(namespaces, dropped uid, Landlock, seccomp, rlimits: for other people's code); "
          "process: a clean worker process, unconfined; none: in the grader (fast to debug; "
          "your own code only). auto (default): none for this course's exercises/ and "
          "reference/, sandbox for any other folder")))
    _output_options(g)
    g.set_defaults(run=commands.cmd_grade)


def _report(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help=_("re-render the report from a results.json (no grading)"),
                       description=_("Re-render DIR/index.html (and exports) from a results.json "
                                     "written by 'torchdrill grade', without grading again."))
    r.add_argument("results", metavar="RESULTS_JSON", help=_("a results.json written by 'grade'"))
    r.add_argument("--out", metavar="DIR", help=_("where index.html goes (default: beside RESULTS_JSON)"))
    r.add_argument("--course", metavar="DIR", help=_("course folder holding report_templates/ "
                                                     "(default: found from the current folder upwards)"))
    _output_options(r)
    r.set_defaults(run=commands.cmd_report)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", action="append", choices=["html", "gradescope"],
                   help=_("also write this format (repeatable): gradescope writes "
                          "DIR/gradescope/results.json; html (DIR/index.html) is always written"))
    p.add_argument("--junit", metavar="FILE", help=_("also write JUnit XML to FILE (for CI dashboards)"))
    p.add_argument("-v", "--verbose", action="store_true",
                   help=_("print every failing property's counterexample under the table"))
    p.set_defaults(write_gradescope=_Later("grader.gradescope.results", "write_gradescope"))


# ------------------------------------------------------------------ the learner's loop

def _learner(sub: argparse._SubParsersAction) -> None:
    lst = sub.add_parser(
        "list", help=_("every drill in course order, with its status and points"),
        description=_("List every drill in course order with its status from the last "
                      "'check' or 'grade' (done, partial, failing, not attempted), its points "
                      "and the hints used, then overall progress and the drill to do next."))
    lst.add_argument("--results", metavar="FILE",
                     help=_("the results to read (default: reports/results.json)"))
    _place_options(lst)
    lst.set_defaults(run=listing.cmd_list)

    chk = sub.add_parser(
        "check", help=_("grade one drill quickly and show what to fix"),
        description=_("Grade one drill in the grader's own process, no worker and no sandbox (so your "
                      "print() output and breakpoint() work; at most 25 examples per property), print "
                      "each failing property with its smallest failing input, expected vs got and your "
                      "code's traceback, record the result for 'list' (the other drills' results are "
                      "kept) and render the report again. Exits 0 when the drill is done, 1 when not."))
    chk.add_argument("name", metavar="NAME",
                     help=_("the drill: its id (tensors/one_hot), its name (one_hot) or its file"))
    _check_options(chk, default_timeout=None)
    chk.set_defaults(run=check.cmd_check)

    wat = sub.add_parser(
        "watch", help=_("re-check a drill on every save, moving on when it is done"),
        description=_("Check a drill now and again every time a file in your folder is saved; "
                      "when the drill is done, move on to the next unfinished one in course "
                      "order. Ctrl-C stops."))
    wat.add_argument("name", metavar="NAME", nargs="?",
                     help=_("the drill to start with (default: the first one not done)"))
    _check_options(wat, default_timeout=watch.WATCH_TIMEOUT_S)
    wat.set_defaults(run=watch.cmd_watch)

    hnt = sub.add_parser(
        "hint", help=_("reveal the next hint for a drill"),
        description=_("Reveal the next hint for a drill, one at a time (the first is a nudge, "
                      "the last nearly the method), with the ones revealed before. How many you "
                      "used is recorded beside your work and shown in the grade's report; "
                      "hints never cost points."))
    hnt.add_argument("name", metavar="NAME", nargs="?",
                     help=_("the drill (default: the first one not done)"))
    hnt.add_argument("--results", metavar="FILE", help=argparse.SUPPRESS)
    _place_options(hnt)
    hnt.set_defaults(run=hint.cmd_hint)

    stb = sub.add_parser(
        "stubs", help=_("switch the docstrings of your drill files to a language (your code untouched)"),
        description=_("Switch the docstrings of the drill files in your folder (exercises/) to the "
                      "language chosen as for every command (--lang, then ${env}, then course.toml's "
                      "language, then the locale): torchdrill stubs --lang zh_CN, and back with --lang en. "
                      "Only docstrings change: the code you wrote, comments and line ends stay byte for "
                      "byte. A docstring you edited is kept as you wrote it, and said; a file that does "
                      "not parse, or is a link, is left alone. The course's English docstrings are kept "
                      "in exercises/{record}, and each file as it was in exercises/{backup}/. Exits 0 "
                      "when every drill file is switched, 1 when one could not be.",
                      env=i18n.LANG_ENV, record=stub_language.ENGLISH_FILE, backup=stub_language.BACKUP_DIR))
    _place_options(stb)
    stb.set_defaults(run=stub_language.cmd_stubs)


def _place_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--course", metavar="DIR",
                   help=_("course folder holding tests/ and course.toml (default: found from the "
                          "current folder upwards)"))
    p.add_argument("--submission", metavar="DIR", default="exercises",
                   help=_("your folder of drills (default: exercises)"))


def _check_options(p: argparse.ArgumentParser, default_timeout: float | None) -> None:
    p.add_argument("--out", metavar="DIR",
                   help=_("where the results.json to update and its report live (default: reports/)"))
    if default_timeout is None:
        timeout_help = _("time limit per property (default: no limit); Ctrl-C stops a run anyway")
    else:
        timeout_help = _("time limit per property (default: {seconds}); Ctrl-C stops a run anyway",
                         seconds=f"{default_timeout:g}")
    p.add_argument("--timeout", metavar="SECONDS", type=float, default=default_timeout, help=timeout_help)
    _place_options(p)


def _release(sub: argparse._SubParsersAction) -> None:
    rel = sub.add_parser(
        "release", help=_("write the student handout (no reference, no hidden tests)"),
        description=_("Write the student handout to OUT (a new or empty folder): the exercises/ "
                      "stubs, the grader, the public tests, report templates, course.toml, tox.ini "
                      "and a README for students. Tests marked hidden or needing the reference "
                      "(the ref fixture) are left out, with what only they use; the folder is "
                      "checked for reference code and hidden test names before it is written."))
    rel.add_argument("out", metavar="OUT", help=_("folder to create (must not exist, or be empty)"))
    rel.add_argument("--notebooks", action="store_true",
                     help=_("also write OUT/notebooks/<topic>.ipynb, one Jupyter/Colab notebook per "
                            "topic: a set-up cell, and for each drill its spec, its stub and a "
                            "check(...) cell that grades it from inside the notebook"))
    rel.add_argument("--handout-url", metavar="URL",
                     help=_("where the notebooks' set-up cell downloads the handout when it is not "
                            "around the notebook (Colab): a .zip or a git repository you publish"))
    rel.add_argument("--course", metavar="DIR", help=_("course folder (default: found from the "
                                                       "current folder upwards)"))
    rel.set_defaults(run=_Later("grader.authoring.release", "cmd_release"))


def _audit(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser(
        "audit", help=_("measure how strong drills' properties are: mutants, do-nothing answers, routes"),
        description=_("For each drill (default: all): grade first-order mutants of the reference (each "
                      "must lose points), do-nothing answers built from the signatures (each must score "
                      "0), and the routes found in torch that reproduce a function (each, graded in "
                      "the sandbox, must earn nothing). What the drill's audit/<topic>/<name>.toml "
                      "accepts, with its reason, is shown as accepted; anything else unexplained "
                      "exits 1. Writes reports/audit/audit.json and audit.html."))
    a.add_argument("drills", nargs="*", metavar="DRILL", help=_("drills to audit, e.g. tensors/one_hot or one_hot"))
    a.add_argument("--seed", type=int, default=0, help=_("picks the sample of mutants and do-nothing mixes (default 0)"))
    a.add_argument("--mutants", type=int, metavar="N",
                   help=_("grade N mutants per drill, picked by the seed (default: every mutant)"))
    a.add_argument("--no-routes", action="store_true", help=_("skip the hunt for routes in torch"))
    a.add_argument("--route-budget", type=float, default=60.0, metavar="SECONDS",
                   help=_("CPU seconds the route hunt may spend per drill (default 60)"))
    a.add_argument("-j", "--processes", type=int, default=2, metavar="N",
                   help=_("grading processes to run at once (default 2)"))
    a.add_argument("--out", metavar="DIR", help=_("where audit.json and audit.html go (default: reports/audit/)"))
    a.add_argument("--course", metavar="DIR", help=_("course folder (default: found from the "
                                                     "current folder upwards)"))
    a.set_defaults(run=_Later("grader.authoring.audit.command", "cmd_audit"))


# ------------------------------------------------------------------ a class

def _grade_all(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "grade-all", help=_("grade a whole class into a gradebook, reports and a grades CSV"),
        description=_("Grade every submission in SUBMISSIONS (one folder laid out like "
                      "exercises/, a .zip of one, or a Jupyter notebook, per student; the student id "
                      "is the entry's name). Writes DIR/gradebook.sqlite, DIR/students/ID/index.html, "
                      "DIR/class.html (with similarity evidence), DIR/grades.csv and "
                      "DIR/similarity.csv. Stopped or killed, the same command "
                      "finishes the rest: submissions already graded with the same tests are "
                      "skipped."))
    g.add_argument("submissions", metavar="SUBMISSIONS", help=_("folder with one entry per student"))
    g.add_argument("--out", metavar="DIR", required=True, help=_("where the gradebook and reports go"))
    g.add_argument("--workers", type=int, metavar="N",
                   help=_("grading processes on this machine (default: one per core)"))
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help=_("grade on a Dask cluster (e.g. tcp://10.0.0.5:8786) instead of this "
                          "machine; workers with a GPU resource also run the cuda tests"))
    g.add_argument("--force", action="store_true",
                   help=_("grade again submissions already in the gradebook with the same tests"))
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help=_("grade only these exercises (their results replace those exercises' "
                          "earlier ones; the others are kept)"))
    g.add_argument("-m", "--marker", metavar="EXPR",
                   help=_("grade only tests matching this pytest marker expression (e.g. cuda, "
                          "on a CUDA runner whose results are merged later)"))
    options.add_to_parser(g, isolation_default="sandbox", isolation_help=(
        _("where submissions' code runs (default sandbox: confined workers; process: "
          "unconfined workers; none: inside the grading process, restarted for every "
          "submission; only for code you trust)")))
    g.add_argument("--allow-degraded", action="store_true",
                   help=_("grade even where the sandbox lacks a layer (no bubblewrap, Landlock, "
                          "seccomp..., a --sandbox-off, or --isolation process or none); without "
                          "it grade-all refuses and names what is missing"))
    g.add_argument("--format", action="append", choices=["gradescope"],
                   help=_("also write DIR/gradescope/ID.json for every student"))
    g.add_argument("--times", metavar="FILE",
                   help=_("when each submission was handed in, for the late penalties of course.toml's "
                          "[[assignments]]: a CSV of student,time rows (trusted, first); then nbgrader's "
                          "ID.timestamp.txt beside the entry (trusted); else no time (never late). A zip's "
                          "member dates are never read: any zip tool sets them"))
    g.add_argument("--student-timestamps", action="store_true",
                   help=_("also read ID/timestamp.txt inside a folder entry (where nbgrader's collect "
                          "leaves the one its submit wrote on the student's machine) when no trusted time "
                          "names the student: the student's word, marked as such in the gradebook, "
                          "class.html, grades.csv and the student's report"))
    g.add_argument("--no-similarity", action="store_true",
                   help=_("skip the similarity evidence (class.html's Similarity section, "
                          "DIR/similarity.csv): pairs of students whose code or wrong answers look "
                          "alike, computed on this machine"))
    g.add_argument("--similarity-threshold", type=float, default=similarity.DEFAULT_THRESHOLD,
                   metavar="SHARE",
                   help=_("flag a pair whose code matches at least this share of one student's code "
                          "once the stub, names, comments and layout are left out (default "
                          "{threshold}); flags are evidence for a person, never a penalty",
                          threshold=f"{similarity.DEFAULT_THRESHOLD:g}"))
    _writes_gradescope_class(g)
    g.set_defaults(run=_Later("grader.classroom.classgrade", "cmd_grade_all"))


def _merge(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser(
        "merge", help=_("fold results from another runner (e.g. a CUDA runner) into a gradebook"),
        description=_("Fold results.json files from another runner into DIR/gradebook.sqlite by "
                      "test id: a real outcome replaces 'not run here'. Then the students' "
                      "reports, the class report and grades.csv are written again."))
    m.add_argument("results", nargs="+", metavar="RESULTS_JSON",
                   help=_("results.json files (e.g. DIR/students/*/results.json from "
                          "'grade-all -m cuda' on a CUDA runner)"))
    m.add_argument("--out", metavar="DIR", required=True, help=_("the grade-all folder to merge into"))
    m.add_argument("--student", metavar="ID",
                   help=_("the student of the one RESULTS_JSON given (default: its submission's name)"))
    m.add_argument("--course", metavar="DIR", help=_("course folder (default: found upwards)"))
    m.add_argument("--format", action="append", choices=["gradescope"],
                   help=_("also write DIR/gradescope/ID.json for every student"))
    _writes_gradescope_class(m)
    m.set_defaults(run=_Later("grader.classroom.classgrade", "cmd_merge"))


def _writes_gradescope_class(p: argparse.ArgumentParser) -> None:
    """A class command writes Gradescope's per-student files (asked with ``--format
    gradescope``, or again where an earlier command wrote them) with this writer."""
    p.set_defaults(write_gradescope_class=_Later("grader.gradescope.results", "write_gradescope_class"))


def _extend(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser(
        "extend", help=_("give a student a later due date for an assignment (no regrading)"),
        description=_("Set STUDENT's own due date for ASSIGNMENT (an [[assignments]] name of "
                      "course.toml) in DIR/gradebook.sqlite, then recompute the late penalties and "
                      "write the reports, class.html and grades.csv again; nothing is graded again. "
                      "The late window counts from the new date. Setting it again replaces it; every "
                      "decision is logged with who, when and why."))
    _decision_about(e)
    e.add_argument("assignment", metavar="ASSIGNMENT", help=_("the assignment's name in course.toml"))
    when = e.add_mutually_exclusive_group(required=True)
    when.add_argument("--until", metavar="TIME",
                      help=_("the new due date, ISO 8601 (2026-09-20T23:59; without an offset, on the "
                             "assignment's time zone)"))
    when.add_argument("--days", type=float, metavar="N",
                      help=_("N days after the assignment's due date (follows the due date if it moves)"))
    when.add_argument("--clear", action="store_true", help=_("remove the student's extension"))
    e.add_argument("--reason", metavar="TEXT", help=_("why (kept in the gradebook, shown in the report; left "
                                                      "out, the reason in force is kept)"))
    _decided_by(e)
    e.set_defaults(run=_Later("grader.classroom.term_commands", "cmd_extend"))


def _decision_about(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help=_("the grade-all folder (holding gradebook.sqlite)"))
    p.add_argument("student", metavar="STUDENT", help=_("the student id"))
    _writes_gradescope_class(p)


def _decided_by(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", metavar="NAME", help=_("who decided (default: your user name)"))
    p.add_argument("--course", metavar="DIR", help=_("course folder (default: found upwards)"))


def _override(sub: argparse._SubParsersAction) -> None:
    o = sub.add_parser(
        "override", help=_("set a student's points for a drill or an assignment, with a reason"),
        description=_("Set STUDENT's points for a DRILL (replaces the graded points; the late "
                      "penalty still applies) or an ASSIGNMENT (its final points: no penalty is "
                      "taken from them) in DIR/gradebook.sqlite, with who, when and why. Overrides "
                      "survive every regrade (--force, --only), show in the student's report and the "
                      "class report, and grades.csv shows raw, penalty, override and final points. "
                      "The reports and exports are written again; nothing is graded again."))
    _decision_about(o)
    o.add_argument("target", metavar="DRILL|ASSIGNMENT",
                   help=_("a drill (tensors/one_hot, or its name) or an assignment's name"))
    o.add_argument("points", metavar="POINTS", nargs="?", help=_("the points to set (0 or more)"))
    o.add_argument("--reason", metavar="TEXT", help=_("why (the student sees it; needed for a first override, "
                                                      "left out later the reason in force is kept)"))
    o.add_argument("--clear", action="store_true", help=_("remove the override"))
    _decided_by(o)
    o.set_defaults(run=_Later("grader.classroom.term_commands", "cmd_override"))


def _gradescope_autograder(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "gradescope-autograder", help=_("write a Gradescope autograder zip for this course"),
        description=_("Write OUT.zip for a Gradescope programming assignment: setup.sh installs "
                      "the pinned CPU torch and this course's torchdrill (a wheel inside the zip); "
                      "run_autograder grades /autograder/submission (exercise files, a handout "
                      "folder, a .zip or a notebook) in the sandbox with every test, hidden ones "
                      "shown after grades are published, and always writes results.json."))
    g.add_argument("out", metavar="OUT.zip", help=_("the zip to write (replaced if it exists)"))
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help=_("the assignment's drills, e.g. tensors/one_hot tensors/padding "
                          "(default: every drill of the course)"))
    options.add_to_parser(g, isolation_default="sandbox", isolation_help=(
        _("where submissions' code runs on Gradescope (default sandbox: confined workers, "
          "with whichever layers Gradescope's machine offers; process: unconfined workers)")))
    g.add_argument("--torch-index", metavar="URL", default=autograder.DEFAULT_TORCH_INDEX,
                   help=_("the package index setup.sh installs torch's CPU build from (default: "
                          "PyTorch's CPU wheel index; PyPI's Linux torch pulls the CUDA packages)"))
    g.set_defaults(run=autograder.cmd_gradescope_autograder)


def _secret(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "secret", help=_("make the course secret that official gradings draw examples from"),
        description=_("Write a new course secret (256 random bits, one line, readable by you only). "
                      "grade-all and gradescope-autograder draw every property's examples from it, "
                      "from wider ranges than the public tests: no student can replay them. It "
                      "never replaces an existing secret."))
    s.add_argument("--out", metavar="FILE",
                   help=_("where to keep it (default: ~/.config/torchdrill/secret, or under "
                          "$XDG_CONFIG_HOME; outside the course folder, so no release or push takes it)"))
    s.set_defaults(run=_Later("grader.authoring.make_secret", "cmd_secret"))
