"""``torchdrill check NAME``: one drill, graded in this process, explained.

``check`` grades one drill with the quick hypothesis profile and pytest's capture
off, so the learner's ``print`` and ``breakpoint()`` work (their output capped,
the debugger's quit stopping the whole check), then prints every failing property
with the same text the score table's ``-v`` prints
(``grader.reports.table.render_problems``). Its result replaces that drill's row in
``reports/results.json``, the file ``list`` reads: one record of where the learner
stands, whichever command wrote it (``grader.core.record``); ``reports/index.html`` is
rendered again from that record, in the language the check speaks.

The learner's code runs inside this process, the one ``torchdrill check`` started
(``--isolation none``: no worker, no sandbox), which is why ``print`` and
``breakpoint()`` reach the learner's terminal.
"""

from __future__ import annotations

import argparse
import io
import os
import pdb
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from types import FrameType, TracebackType
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from grader.core import drill_texts, hints, i18n, syllabus
from grader.core.errors import EXIT_OK, GraderFailed, GradingInterrupted, TorchdrillError, UsageError
from grader.core.i18n import _
from grader.core.outcomes import NOT_ATTEMPTED, NOT_RUN, PASSED
from grader.core.record import replaced_note
from grader.core.record import update as update_record
from grader.core.results_json import ExerciseResult, Results
from grader.core.syllabus import exercise_tests
from grader.grading.pipeline import run
from grader.grading.request import GradingRequest, Limits
from grader.learner.place import (
    Place,
    last_results,
    merge,
    next_unfinished,
    place,
    short_name,
    statuses,
)
from grader.reports import present, student_report, table

QUICK_PROFILE = "torchdrill-quick"
MAX_CHECK_OUTPUT = 100_000  # characters of the learner's own output one check shows (grade keeps 2,000 per test)
EXIT_NOT_DONE = 1
MARKS = {PASSED: "✓", NOT_ATTEMPTED: "·", NOT_RUN: "-", "problem": "✗"}
ASCII_MARKS = {PASSED: "+", NOT_ATTEMPTED: ".", NOT_RUN: "-", "problem": "x"}  # logs, pipes


class _CheckPdb(pdb.Pdb):
    """pdb whose quit stops the whole check, not just the example being debugged
    (hypothesis would run the next example, and stop at the breakpoint again)."""

    stop_check = False

    def do_quit(self, arg: str) -> bool | None:
        self.stop_check = True
        return super().do_quit(arg)

    do_q = do_exit = do_quit

    def do_EOF(self, arg: str) -> bool | None:
        self.message("")
        return self.do_quit(arg)

    def interaction(self, frame: FrameType | None, traceback: TracebackType | None) -> None:
        super().interaction(frame, traceback)
        if self.stop_check:  # raised into the learner's frame: the check stops like on Ctrl-C
            raise KeyboardInterrupt


def _debug_here(*args: Any, **kwargs: Any) -> None:
    """``breakpoint()``: stop the per-call clock (a learner in the debugger takes their
    time), then open ``_CheckPdb`` in the caller's frame."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
    _CheckPdb(stdout=sys.__stdout__).set_trace(sys._getframe(1))  # past any output cap


@contextmanager
def _breakpoints_for_check() -> Iterator[None]:
    """``breakpoint()`` in the learner's code opens ``_CheckPdb`` (unless
    PYTHONBREAKPOINT says otherwise); pytest's own hook needs its terminal plugin."""
    if os.environ.get("PYTHONBREAKPOINT"):
        yield
        return
    previous = sys.breakpointhook
    sys.breakpointhook = _debug_here
    try:
        yield
    finally:
        sys.breakpointhook = previous


@dataclass
class _Budget:
    """What is left of a check's output cap, and how much was cut."""

    cap: int
    left: int
    cut: int = 0


class _CappedOutput(io.TextIOBase):
    """A text stream that passes the first ``cap.left`` characters on to ``stream``, says
    once that the rest was cut, and drops it: a learner's ``print`` in a loop must not
    flood the terminal (stdout and stderr share one ``_Budget``)."""

    def __init__(self, stream: TextIO, budget: _Budget):
        self.stream, self.budget = stream, budget

    def write(self, text: str) -> int:
        budget = self.budget
        if budget.left > 0:
            shown = text[:budget.left]
            self.stream.write(shown)
            budget.left -= len(shown)
            budget.cut += len(text) - len(shown)
            if budget.left == 0:
                self.stream.write("\n" + _("... (your output is cut here: a check shows {cap} "
                                            "characters of it)", cap=f"{budget.cap:,}") + "\n")
        else:
            budget.cut += len(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


@contextmanager
def _capped_output(cap: int) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` capped to ``cap`` characters together for the block."""
    budget = _Budget(cap, cap)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _CappedOutput(saved[0], budget), _CappedOutput(saved[1], budget)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        if budget.cut:
            print(_("({cut} characters of your output were not shown)", cut=f"{budget.cut:,}"),
                  file=sys.stderr)


def run_check(root: Path, drill_id: str, submission: Path, timeout: float | None = None) -> Results:
    """Grade one drill in this process (quick profile, no capture); return the results."""
    test = exercise_tests(root).get(drill_id)
    if test is None:
        raise UsageError(_("drill {drill} has no test file at {path}", drill=drill_id,
                           path=syllabus.test_file(root, drill_id)))
    # The public examples: what a learner can replay, even with a secret in the environment.
    request = GradingRequest(course=root, folder=submission, only=(drill_id,), profile=QUICK_PROFILE,
                             limits=Limits(test_s=timeout or 0))
    try:
        with _breakpoints_for_check(), _capped_output(MAX_CHECK_OUTPUT):
            results = run(request, pytest_args=["-p", "no:xdist", "-p", "no:debugging", "--capture=no"])
    except GradingInterrupted:
        raise KeyboardInterrupt from None
    for ex in results["exercises"]:
        ex["profile"] = QUICK_PROFILE  # list tells a quick check from a full grade
    return results


def check(where: Place, drill_id: str, console: Console, timeout: float | None = None,
          record: bool = True) -> str:
    """Check one drill, record it in the results file (unless ``record`` is False), print
    what to fix; its status."""
    started = time.perf_counter()
    results = run_check(where.root, drill_id, where.submission, timeout)
    elapsed = time.perf_counter() - started
    row = next((ex for ex in results["exercises"] if ex["id"] == drill_id), None)
    if row is None:
        raise GraderFailed(_("the tests of {drill} reported no graded property", drill=drill_id))
    if record:
        merged, notes = record_check(where, results)
    else:
        merged, notes = merge(last_results(where.results_path), results, where.course), []
    print_check(where, row, console, elapsed)
    for note in notes:
        console.print(Text("\n" + note, style="dim"))
    print_next_step(where, row, statuses(merged), console)
    return row["status"]


def record_check(where: Place, results: Results) -> tuple[Results, list[str]]:
    """Update the learner's record with a check's results (``grader.core.record``: this
    drill's row replaced, the others kept) and render their report again from it, in the
    language in force; what the record holds now, and what the learner should be told
    (an earlier record replaced, a record or report that could not be written)."""
    notes: list[str] = []
    folder = where.results_path.parent  # the report lives beside its results.json

    def refresh(merged: Results) -> None:
        try:
            student_report.write_report(merged, folder, where.root, i18n.current().lang)
        except (OSError, TorchdrillError) as exc:  # a read-only folder; a course without templates
            notes.append(_("the report in {path} is not refreshed: {error}", path=where.shown_path(folder),
                           error=exc.sentence() if isinstance(exc, TorchdrillError) else exc))

    try:
        done = update_record(where.results_path, results, where.course.ids, then=refresh)
    except OSError as exc:
        return merge(last_results(where.results_path), results, where.course), [
            _("this check is not recorded in {path}: {error}", path=where.shown_path(where.results_path),
              error=exc)]
    replaced = replaced_note(where.shown_path(where.results_path), done)
    return done.results, ([replaced] if replaced else []) + notes


def print_check(where: Place, row: ExerciseResult, console: Console, elapsed: float) -> None:
    """One line per property, then each failing property explained."""
    console.print()
    head = Text(row["id"], style="bold")
    head.append(f"  {present.label(row['status'])}", style=table.STATUS_STYLE.get(row["status"], ""))
    score = _("pending") if row["status"] == NOT_RUN else present.score_text(row["score"], row["max_score"])
    head.append("  " + _("{score} points  ({seconds} s, quick check)", score=score,
                         seconds=f"{elapsed:.1f}"), style="dim")
    console.print(head)
    marks = MARKS if console.is_terminal else ASCII_MARKS
    if where is not None:  # the course's titles and phrases in the command's language
        row = drill_texts.with_titles({"exercises": [row]}, where.root, i18n.current().lang)["exercises"][0]
    titles = drill_texts.property_titles({"exercises": [row]})
    for t in present.sorted_tests(row["tests"]):
        mark = marks.get(t["outcome"], marks["problem"])
        line = Text(f"  {mark} {present.property_title(t['name'], titles)}")
        if t["outcome"] != PASSED:
            line.append(f"  {present.label(t['outcome'])}", style=table.STATUS_STYLE.get(t["outcome"], "red"))
        console.print(line)
    if row["status"] == NOT_ATTEMPTED:
        console.print(Text("\n" + _("Not attempted yet: replace `raise NotImplementedError` in {path}.",
                                     path=where.shown_path(where.exercise_file(row["id"])))))
    table.render_problems({"exercises": [row]}, console)


def print_next_step(where: Place, row: ExerciseResult, status: dict[str, str], console: Console) -> None:
    console.print()
    drill = where.course.drill(row["id"]) if row["id"] in where.course.ids else None
    if row["status"] == PASSED:
        following = next_unfinished(where.course, status)
        if following:
            console.print(Text(_("{drill} is done (`torchdrill grade` tries more examples); "
                                 "next: torchdrill check {name}",
                                 drill=row["id"], name=short_name(where.course, following))))
        else:
            console.print(Text(_("{drill} is done (`torchdrill grade` tries more examples); every drill "
                                 "is done: run `torchdrill grade` for the full grade", drill=row["id"])))
        return
    if drill is not None and drill.hints:
        left = len(drill.hints) - len(hints.shown(where.submission, drill))
        if left:
            console.print(Text(_("stuck? torchdrill hint {name}  ({left} of {count} hints left)",
                                 name=drill.name, left=left, count=len(drill.hints)), style="dim"))


def for_file(where: Place, given: str, drill_id: str) -> Place | None:
    """Where a drill file named on the command line lives, when it is not the learner's
    own (``check ../other/exercises/tensors/one_hot.py`` grades that file, not this
    folder's); None for the learner's own file, a test file, or a drill name. (``resolve``
    took the file for ``drill_id`` only if its path ends in ``tensors/one_hot.py``.)"""
    path = Path(given)
    if path.suffix != ".py" or not path.is_file() or path.name.startswith("test_"):
        return None
    path = path.resolve()
    if path == where.exercise_file(drill_id).resolve():
        return None
    return replace(where, submission=path.parents[len(PurePosixPath(drill_id).parts) - 1])


def cmd_check(args: argparse.Namespace) -> int:
    where = place(args)
    drill_id = where.course.resolve(args.name)
    elsewhere = for_file(where, args.name, drill_id)
    console = table.make_console()
    if elsewhere is not None:
        path, folder = f"{elsewhere.submission / drill_id}.py", where.submission.name
        console.print(Text(_("checking {path} (not your {folder}/: recorded in {results})", path=path,
                             folder=folder, results=where.results_path) if args.out else
                           _("checking {path} (not your {folder}/: not recorded)", path=path, folder=folder),
                           style="dim"))
    try:
        status = check(elsewhere or where, drill_id, console, args.timeout,
                       record=elsewhere is None or bool(args.out))
    except KeyboardInterrupt:
        console.print("\n" + _("interrupted"))
        return 130
    return EXIT_OK if status == PASSED else EXIT_NOT_DONE
