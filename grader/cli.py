"""``torchdrill``: the command line. It parses arguments and calls the command.

Every command lives in the layer it belongs to (``grader.grading.commands``:
``grade``, ``report``; ``grader.learner``: ``list``, ``check``, ``watch``, ``hint``;
``grader.authoring``: ``release``, ``gradescope-autograder``, ``secret``;
``grader.classroom.classgrade``: ``grade-all``, ``merge``;
``grader.classroom.term_commands``: ``extend``, ``override``) as a
``cmd_*`` function of the parsed arguments returning the exit code. This module
is the top of the package: nothing imports it.
"""

from __future__ import annotations

import argparse
import sys

import grader
from grader.authoring import gradescope, make_secret, release
from grader.classroom import classgrade, term_commands
from grader.core.errors import EXIT_INTERRUPTED, TorchdrillError
from grader.grading import commands, options
from grader.learner import check, hint, listing, watch


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdrill",
        description="PyTorch drills graded by property tests: grade a submission, "
                    "see the score of every property and the smallest input that breaks it.")
    parser.add_argument("--version", action="version", version=f"torchdrill {grader.__version__}")
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except TorchdrillError as exc:
        print(f"torchdrill: {exc.sentence()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("torchdrill: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


# ------------------------------------------------------------------ grading one submission

def _grade(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("grade", help="grade one submission: a folder, a zip, a notebook or a drill's file",
                       description="Grade one submission: a folder laid out like exercises/ (or a "
                                   "handout folder), a .zip of one, a Jupyter notebook, or drill "
                                   "files named after their drill (one_hot.py). Exits 0 whenever "
                                   "grading worked, whatever the score.")
    g.add_argument("submission", nargs="?", default="exercises",
                   help="what to grade (default: exercises; 'reference' grades the reference). A "
                        "notebook's cells are read, never run here; anything but this course's own "
                        "folders is graded in the sandbox")
    g.add_argument("--out", metavar="DIR", help="where results.json goes (default: reports/)")
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help="grade only these exercises, e.g. tensors/one_hot")
    g.add_argument("-n", "--workers", type=int, default=0, metavar="N",
                   help="spread the tests over N processes (pytest-xdist; default 0: this process)")
    options.add_to_parser(g, isolation_default="auto", isolation_help=(
        "where the submission's code runs. sandbox: a confined worker process per exercise "
        "(namespaces, dropped uid, Landlock, seccomp, rlimits: for other people's code); "
        "process: a clean worker process, unconfined; none: in the grader (fast to debug; "
        "your own code only). auto (default): none for this course's exercises/ and "
        "reference/, sandbox for any other folder"))
    _output_options(g)
    g.set_defaults(run=commands.cmd_grade)


def _report(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="re-render the report from a results.json (no grading)",
                       description="Re-render DIR/index.html (and exports) from a results.json "
                                   "written by 'torchdrill grade', without grading again.")
    r.add_argument("results", metavar="RESULTS_JSON", help="a results.json written by 'grade'")
    r.add_argument("--out", metavar="DIR", help="where index.html goes (default: beside RESULTS_JSON)")
    r.add_argument("--course", metavar="DIR", help="course folder holding report_templates/ "
                                                   "(default: found from the current folder upwards)")
    _output_options(r)
    r.set_defaults(run=commands.cmd_report)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", action="append", choices=["html", "gradescope"],
                   help="also write this format (repeatable): gradescope writes "
                        "DIR/gradescope/results.json; html (DIR/index.html) is always written")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE (for CI dashboards)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every failing property's counterexample under the table")


# ------------------------------------------------------------------ the learner's loop

def _learner(sub: argparse._SubParsersAction) -> None:
    lst = sub.add_parser(
        "list", help="every drill in course order, with its status and points",
        description="List every drill in course order with its status from the last "
                    "'check' or 'grade' (done, partial, failing, not attempted), its points "
                    "and the hints used, then overall progress and the drill to do next.")
    lst.add_argument("--results", metavar="FILE",
                     help="the results to read (default: reports/results.json)")
    _place_options(lst)
    lst.set_defaults(run=listing.cmd_list)

    chk = sub.add_parser(
        "check", help="grade one drill quickly and show what to fix",
        description="Grade one drill in this process (at most 25 examples per property, your print() "
                    "output and breakpoint() work), print each failing property with its "
                    "smallest failing input, expected vs got and your code's traceback, and "
                    "record the result for 'list'. Exits 0 when the drill is done, 1 when not.")
    chk.add_argument("name", metavar="NAME",
                     help="the drill: its id (tensors/one_hot), its name (one_hot) or its file")
    _check_options(chk, default_timeout=None)
    chk.set_defaults(run=check.cmd_check)

    wat = sub.add_parser(
        "watch", help="re-check a drill on every save, moving on when it is done",
        description="Check a drill now and again every time a file in your folder is saved; "
                    "when the drill is done, move on to the next unfinished one in course "
                    "order. Ctrl-C stops.")
    wat.add_argument("name", metavar="NAME", nargs="?",
                     help="the drill to start with (default: the first one not done)")
    _check_options(wat, default_timeout=watch.WATCH_TIMEOUT_S)
    wat.set_defaults(run=watch.cmd_watch)

    hnt = sub.add_parser(
        "hint", help="reveal the next hint for a drill",
        description="Reveal the next hint for a drill, one at a time (the first is a nudge, "
                    "the last nearly the method), with the ones revealed before. How many you "
                    "used is recorded beside your work and shown in the grade's report; "
                    "hints never cost points.")
    hnt.add_argument("name", metavar="NAME", nargs="?",
                     help="the drill (default: the first one not done)")
    hnt.add_argument("--results", metavar="FILE", help=argparse.SUPPRESS)
    _place_options(hnt)
    hnt.set_defaults(run=hint.cmd_hint)


def _place_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--course", metavar="DIR",
                   help="course folder holding tests/ and course.toml (default: found from the "
                        "current folder upwards)")
    p.add_argument("--submission", metavar="DIR", default="exercises",
                   help="your folder of drills (default: exercises)")


def _check_options(p: argparse.ArgumentParser, default_timeout: float | None) -> None:
    p.add_argument("--out", metavar="DIR",
                   help="where the results.json to update lives (default: reports/)")
    limit = "no limit" if default_timeout is None else f"{default_timeout:g}"
    p.add_argument("--timeout", metavar="SECONDS", type=float, default=default_timeout,
                   help=f"time limit per property (default: {limit}); Ctrl-C stops a run anyway")
    _place_options(p)


def _release(sub: argparse._SubParsersAction) -> None:
    rel = sub.add_parser(
        "release", help="write the student handout (no reference, no hidden tests)",
        description="Write the student handout to OUT (a new or empty folder): the exercises/ "
                    "stubs, the grader, the public tests, report templates, course.toml, tox.ini "
                    "and a README for students. Tests marked hidden or needing the reference "
                    "(the ref fixture) are left out, with what only they use; the folder is "
                    "checked for reference code and hidden test names before it is written.")
    rel.add_argument("out", metavar="OUT", help="folder to create (must not exist, or be empty)")
    rel.add_argument("--notebooks", action="store_true",
                     help="also write OUT/notebooks/<topic>.ipynb, one Jupyter/Colab notebook per "
                          "topic: a set-up cell, and for each drill its spec, its stub and a "
                          "check(...) cell that grades it from inside the notebook")
    rel.add_argument("--handout-url", metavar="URL",
                     help="where the notebooks' set-up cell downloads the handout when it is not "
                          "around the notebook (Colab): a .zip or a git repository you publish")
    rel.add_argument("--course", metavar="DIR", help="course folder (default: found from the "
                                                     "current folder upwards)")
    rel.set_defaults(run=release.cmd_release)


# ------------------------------------------------------------------ a class

def _grade_all(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "grade-all", help="grade a whole class into a gradebook, reports and a grades CSV",
        description="Grade every submission in SUBMISSIONS (one folder laid out like "
                    "exercises/, a .zip of one, or a Jupyter notebook, per student; the student id "
                    "is the entry's name). Writes DIR/gradebook.sqlite, DIR/students/ID/index.html, "
                    "DIR/class.html (with similarity evidence), DIR/grades.csv and "
                    "DIR/similarity.csv. Stopped or killed, the same command "
                    "finishes the rest: submissions already graded with the same tests are "
                    "skipped.")
    g.add_argument("submissions", metavar="SUBMISSIONS", help="folder with one entry per student")
    g.add_argument("--out", metavar="DIR", required=True, help="where the gradebook and reports go")
    g.add_argument("--workers", type=int, metavar="N",
                   help="grading processes on this machine (default: one per core)")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="grade on a Dask cluster (e.g. tcp://10.0.0.5:8786) instead of this "
                        "machine; workers with a GPU resource also run the cuda tests")
    g.add_argument("--force", action="store_true",
                   help="grade again submissions already in the gradebook with the same tests")
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help="grade only these exercises (their results replace those exercises' "
                        "earlier ones; the others are kept)")
    g.add_argument("-m", "--marker", metavar="EXPR",
                   help="grade only tests matching this pytest marker expression (e.g. cuda, "
                        "on a CUDA runner whose results are merged later)")
    options.add_to_parser(g, isolation_default="sandbox", isolation_help=(
        "where submissions' code runs (default sandbox: confined workers; process: "
        "unconfined workers; none: inside the grading process, restarted for every "
        "submission; only for code you trust)"))
    g.add_argument("--allow-degraded", action="store_true",
                   help="grade even where the sandbox lacks a layer (no bubblewrap, Landlock, "
                        "seccomp..., a --sandbox-off, or --isolation process or none); without "
                        "it grade-all refuses and names what is missing")
    g.add_argument("--format", action="append", choices=["gradescope"],
                   help="also write DIR/gradescope/ID.json for every student")
    g.add_argument("--times", metavar="FILE|zip",
                   help="when each submission was handed in, for the late penalties of course.toml's "
                        "[[assignments]]: a CSV of student,time, or 'zip' for a zip's newest member; "
                        "without it, ID.timestamp.txt beside an entry or ID/timestamp.txt inside it "
                        "(nbgrader's convention), else no time (never late)")
    g.add_argument("--no-similarity", action="store_true",
                   help="skip the similarity evidence (class.html's Similarity section, "
                        "DIR/similarity.csv): pairs of students whose code or wrong answers look "
                        "alike, computed on this machine")
    g.add_argument("--similarity-threshold", type=float, default=classgrade.similarity.DEFAULT_THRESHOLD,
                   metavar="SHARE",
                   help="flag a pair whose code matches at least this share of one student's code "
                        "once the stub, names, comments and layout are left out (default "
                        f"{classgrade.similarity.DEFAULT_THRESHOLD:g}); flags are evidence for a "
                        "person, never a penalty")
    g.set_defaults(run=classgrade.cmd_grade_all)


def _merge(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser(
        "merge", help="fold results from another runner (e.g. a CUDA runner) into a gradebook",
        description="Fold results.json files from another runner into DIR/gradebook.sqlite by "
                    "test id: a real outcome replaces 'not run here'. Then the students' "
                    "reports, the class report and grades.csv are written again.")
    m.add_argument("results", nargs="+", metavar="RESULTS_JSON",
                   help="results.json files (e.g. DIR/students/*/results.json from "
                        "'grade-all -m cuda' on a CUDA runner)")
    m.add_argument("--out", metavar="DIR", required=True, help="the grade-all folder to merge into")
    m.add_argument("--student", metavar="ID",
                   help="the student of the one RESULTS_JSON given (default: its submission's name)")
    m.add_argument("--course", metavar="DIR", help="course folder (default: found upwards)")
    m.add_argument("--format", action="append", choices=["gradescope"],
                   help="also write DIR/gradescope/ID.json for every student")
    m.set_defaults(run=classgrade.cmd_merge)


def _extend(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser(
        "extend", help="give a student a later due date for an assignment (no regrading)",
        description="Set STUDENT's own due date for ASSIGNMENT (an [[assignments]] name of "
                    "course.toml) in DIR/gradebook.sqlite, then recompute the late penalties and "
                    "write the reports, class.html and grades.csv again; nothing is graded again. "
                    "The late window counts from the new date. Setting it again replaces it; every "
                    "decision is logged with who, when and why.")
    _decision_about(e)
    e.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment's name in course.toml")
    when = e.add_mutually_exclusive_group(required=True)
    when.add_argument("--until", metavar="TIME",
                      help="the new due date, ISO 8601 (2026-09-20T23:59; without an offset, on the "
                           "assignment's time zone)")
    when.add_argument("--days", type=float, metavar="N",
                      help="N days after the assignment's due date (follows the due date if it moves)")
    when.add_argument("--clear", action="store_true", help="remove the student's extension")
    e.add_argument("--reason", metavar="TEXT", help="why (kept in the gradebook, shown in the report)")
    _decided_by(e)
    e.set_defaults(run=term_commands.cmd_extend)


def _decision_about(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="the grade-all folder (holding gradebook.sqlite)")
    p.add_argument("student", metavar="STUDENT", help="the student id")


def _decided_by(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", metavar="NAME", help="who decided (default: your user name)")
    p.add_argument("--course", metavar="DIR", help="course folder (default: found upwards)")


def _override(sub: argparse._SubParsersAction) -> None:
    o = sub.add_parser(
        "override", help="set a student's points for a drill or an assignment, with a reason",
        description="Set STUDENT's points for a DRILL (replaces the graded points; the late "
                    "penalty still applies) or an ASSIGNMENT (its final points: no penalty is "
                    "taken from them) in DIR/gradebook.sqlite, with who, when and why. Overrides "
                    "survive every regrade (--force, --only), show in the student's report and the "
                    "class report, and grades.csv shows raw, penalty, override and final points. "
                    "The reports and exports are written again; nothing is graded again.")
    _decision_about(o)
    o.add_argument("target", metavar="DRILL|ASSIGNMENT",
                   help="a drill (tensors/one_hot, or its name) or an assignment's name")
    o.add_argument("points", metavar="POINTS", nargs="?", help="the points to set (0 or more)")
    o.add_argument("--reason", metavar="TEXT", help="why (required to set one; the student sees it)")
    o.add_argument("--clear", action="store_true", help="remove the override")
    _decided_by(o)
    o.set_defaults(run=term_commands.cmd_override)


def _gradescope_autograder(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "gradescope-autograder", help="write a Gradescope autograder zip for this course",
        description="Write OUT.zip for a Gradescope programming assignment: setup.sh installs "
                    "the pinned CPU torch and this course's torchdrill (a wheel inside the zip); "
                    "run_autograder grades /autograder/submission (exercise files, a handout "
                    "folder, a .zip or a notebook) in the sandbox with every test, hidden ones "
                    "shown after grades are published, and always writes results.json.")
    g.add_argument("out", metavar="OUT.zip", help="the zip to write (replaced if it exists)")
    g.add_argument("--only", nargs="+", metavar="EXERCISE_ID",
                   help="the assignment's drills, e.g. tensors/one_hot tensors/padding "
                        "(default: every drill of the course)")
    options.add_to_parser(g, isolation_default="sandbox", isolation_help=(
        "where submissions' code runs on Gradescope (default sandbox: confined workers, "
        "with whichever layers Gradescope's machine offers; process: unconfined workers)"))
    g.add_argument("--torch-index", metavar="URL", default=gradescope.DEFAULT_TORCH_INDEX,
                   help="the package index setup.sh installs torch's CPU build from (default: "
                        "PyTorch's CPU wheel index; PyPI's Linux torch pulls the CUDA packages)")
    g.set_defaults(run=gradescope.cmd_gradescope_autograder)


def _secret(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "secret", help="make the course secret that official gradings draw examples from",
        description="Write a new course secret (256 random bits, one line, readable by you only). "
                    "grade-all and gradescope-autograder draw every property's examples from it, "
                    "from wider ranges than the public tests: no student can replay them. It "
                    "never replaces an existing secret.")
    s.add_argument("--out", metavar="FILE",
                   help="where to keep it (default: ~/.config/torchdrill/secret, or under "
                        "$XDG_CONFIG_HOME; outside the course folder, so no release or push takes it)")
    s.set_defaults(run=make_secret.cmd_secret)
