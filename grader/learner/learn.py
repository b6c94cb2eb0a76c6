"""The learner's loop: ``torchdrill list``, ``check``, ``watch`` and ``hint``.

``check`` grades one drill in this process with the quick hypothesis profile and
pytest's capture off, so the learner's ``print`` and ``breakpoint()`` work, then
prints every failing property with the same text the score table's ``-v`` prints
(``grader.reports.table.render_problems``). Its result replaces that drill's row in
``reports/results.json``, the file ``list`` reads: one record of where the
learner stands, whichever command wrote it.
"""

from __future__ import annotations

import argparse
import io
import os
import pdb
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from types import FrameType, TracebackType
from typing import Any, TextIO

from rich import box
from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.core import course as course_module
from grader.core import hints
from grader.core import results as results_module
from grader.core.course import Course, CourseError, Drill, exercise_tests, find_course
from grader.core.errors import EXIT_OK, GraderFailed, GradingInterrupted, UsageError
from grader.core.layout import Layout
from grader.core.outcomes import NOT_ATTEMPTED, NOT_RUN, PASSED
from grader.core.results import ExerciseResult, Results
from grader.grading.pipeline import grade_folder
from grader.intake.submission import learner_folder
from grader.reports import present, table

QUICK_PROFILE = "torchdrill-quick"
WATCH_TIMEOUT_S = 60.0
MAX_CHECK_OUTPUT = 100_000  # characters of the learner's own output one check shows (grade keeps 2,000 per test)
EXIT_NOT_DONE = 1

# An exercise's status, in the words of a learner's to-do list.
LIST_STATUS = {PASSED: "done", "partial": "partial", "failed": "failing", "error": "error",
               NOT_ATTEMPTED: "not attempted", NOT_RUN: "not run here"}
NOT_CHECKED = "not checked"
MARKS = {PASSED: "✓", NOT_ATTEMPTED: "·", NOT_RUN: "-", "problem": "✗"}
ASCII_MARKS = {PASSED: "+", NOT_ATTEMPTED: ".", NOT_RUN: "-", "problem": "x"}  # logs, pipes


# ------------------------------------------------------------------ where things are

@dataclass(frozen=True)
class Place:
    """The course, the learner's folder and the results file one command works with."""

    root: Path
    course: Course
    submission: Path
    results_path: Path

    def exercise_file(self, drill_id: str) -> Path:
        return self.submission / f"{drill_id}.py"

    def shown_path(self, path: Path) -> str:
        """``path`` relative to the current folder when it is below it (shorter to read)."""
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)


def place(args: argparse.Namespace) -> Place:
    root = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    course = load_course(root)
    submission = learner_folder(getattr(args, "submission", None) or "exercises", root)
    results, out = getattr(args, "results", None), getattr(args, "out", None)
    if results:
        results_path = Path(results).resolve()
    else:
        results_path = (Layout(Path(out).resolve()) if out else Layout.default(root)).results
    return Place(root, course, submission, results_path)


def load_course(root: Path) -> Course:
    try:
        return course_module.load(root)
    except CourseError as exc:
        raise UsageError(str(exc)) from None


def resolve(course: Course, name: str) -> str:
    try:
        return course.resolve(name)
    except CourseError as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------------------ results on disk

def last_results(path: Path) -> Results | None:
    """The results a learner's last ``grade`` or ``check`` left, or None."""
    try:
        return results_module.read(path)
    except (OSError, ValueError):
        return None


def statuses(results: Results | None) -> dict[str, str]:
    return {ex["id"]: ex["status"] for ex in (results.get("exercises", []) if results else [])}


def merge(old: Results | None, new: Results, course: Course) -> Results:
    """``new``'s exercises replace the same exercises of ``old``; the others stay.

    Results of another submission, or of another test suite (tests changed since),
    are not kept: they would describe something else.
    """
    if old is None or old.get("submission") != new.get("submission") \
            or old.get("suite_hash") != new.get("suite_hash"):
        return new
    return results_module.replace_exercises(old, new, course.ids)


def next_unfinished(course: Course, status: dict[str, str]) -> str | None:
    """The next drill: the one rule ``list``, ``check``, ``watch`` and ``hint`` share.

    The first drill in course order that is not done, skipping drills that cannot be
    done here (every property "not run here", e.g. ``cuda``); None when none is left.
    The same results give the same answer in every command."""
    for drill_id in course.ids:
        if status.get(drill_id) not in (PASSED, NOT_RUN):
            return drill_id
    return None


# ------------------------------------------------------------------ check

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
                self.stream.write(f"\n... (your output is cut here: a check shows {budget.cap:,} "
                                  "characters of it)\n")
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
            print(f"({budget.cut:,} characters of your output were not shown)", file=sys.stderr)


def run_check(root: Path, drill_id: str, submission: Path, timeout: float | None = None) -> Results:
    """Grade one drill in this process (quick profile, no capture); return the results."""
    test = exercise_tests(root).get(drill_id)
    if test is None:
        raise UsageError(f"drill {drill_id} has no test file at {course_module.test_file(root, drill_id)}")
    args = [str(test), "-p", "no:xdist", "-p", "no:debugging", "--capture=no",
            "--hypothesis-profile", QUICK_PROFILE, "--test-timeout", str(timeout or 0),
            "--public-examples"]  # what a learner can replay, even with a secret in the environment
    try:
        with _breakpoints_for_check(), _capped_output(MAX_CHECK_OUTPUT):
            results = grade_folder(root, submission, args)
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
    merged = merge(last_results(where.results_path), results, where.course)
    if record:
        results_module.write(merged, where.results_path)
    row = next((ex for ex in results["exercises"] if ex["id"] == drill_id), None)
    if row is None:
        raise GraderFailed(f"the tests of {drill_id} reported no graded property")
    print_check(where, row, console, elapsed)
    print_next_step(where, row, statuses(merged), console)
    return row["status"]


def print_check(where: Place, row: ExerciseResult, console: Console, elapsed: float) -> None:
    """One line per property, then each failing property explained."""
    console.print()
    head = Text(row["id"], style="bold")
    head.append(f"  {present.label(row['status'])}", style=table.STATUS_STYLE.get(row["status"], ""))
    score = "pending" if row["status"] == NOT_RUN else present.score_text(row["score"], row["max_score"])
    head.append(f"  {score} points  ({elapsed:.1f} s, quick check)", style="dim")
    console.print(head)
    marks = MARKS if console.is_terminal else ASCII_MARKS
    for t in present.sorted_tests(row["tests"]):
        mark = marks.get(t["outcome"], marks["problem"])
        line = Text(f"  {mark} {present.property_title(t['name'])}")
        if t["outcome"] != PASSED:
            line.append(f"  {present.label(t['outcome'])}", style=table.STATUS_STYLE.get(t["outcome"], "red"))
        console.print(line)
    if row["status"] == NOT_ATTEMPTED:
        console.print(Text(f"\nNot attempted yet: replace `raise NotImplementedError` in "
                           f"{where.shown_path(where.exercise_file(row['id']))}."))
    table.render_problems({"exercises": [row]}, console)


def print_next_step(where: Place, row: ExerciseResult, status: dict[str, str], console: Console) -> None:
    console.print()
    drill = where.course.drill(row["id"]) if row["id"] in where.course.ids else None
    if row["status"] == PASSED:
        following = next_unfinished(where.course, status)
        after = f"next: torchdrill check {_short(where.course, following)}" if following else \
            "every drill is done: run `torchdrill grade` for the full grade"
        console.print(Text(f"{row['id']} is done (`torchdrill grade` tries more examples); {after}"))
        return
    if drill is not None and drill.hints:
        left = len(drill.hints) - len(hints.shown(where.submission, drill))
        if left:
            console.print(Text(f"stuck? torchdrill hint {drill.name}  ({left} of {len(drill.hints)} "
                               "hints left)", style="dim"))


def _short(course: Course, drill_id: str) -> str:
    """The shortest name ``resolve`` maps back to ``drill_id``."""
    name = drill_id.rsplit("/", 1)[-1]
    try:
        return name if course.resolve(name) == drill_id else drill_id
    except CourseError:
        return drill_id


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
    drill_id = resolve(where.course, args.name)
    elsewhere = for_file(where, args.name, drill_id)
    console = table.make_console()
    if elsewhere is not None:
        console.print(Text(f"checking {elsewhere.submission / drill_id}.py (not your {where.submission.name}/: "
                           f"{'recorded in ' + str(where.results_path) if args.out else 'not recorded'})",
                           style="dim"))
    try:
        status = check(elsewhere or where, drill_id, console, args.timeout,
                       record=elsewhere is None or bool(args.out))
    except KeyboardInterrupt:
        console.print("\ninterrupted")
        return 130
    return EXIT_OK if status == PASSED else EXIT_NOT_DONE


# ------------------------------------------------------------------ list

def render_list(course: Course, results: Results | None, used: dict[str, int],
                console: Console) -> None:
    """Every drill in course order with its last status and points, then progress."""
    rows = {ex["id"]: ex for ex in (results.get("exercises", []) if results else [])}
    tty = console.is_terminal
    out = Table(title=escape(course.title), title_justify="left",
                box=box.SIMPLE_HEAD if tty else box.ASCII, safe_box=not tty)
    columns: tuple[tuple[str, JustifyMethod], ...] = (("#", "right"), ("drill", "left"), ("status", "left"),
                                                      ("points", "right"), ("hints", "right"))
    for name, justify in columns:
        out.add_column(name, justify=justify)
    number = 0
    for topic in course.topics:
        out.add_row("", f"[bold]{escape(topic.title)}[/]", "", "", "")
        for drill in topic.drills:
            number += 1
            out.add_row(str(number), *_list_cells(course, drill, rows.get(drill.id), used))
        if topic is not course.topics[-1]:
            out.add_section()
    console.print(out)
    for line in progress_lines(course, rows):
        console.print(Text(line))


def _list_cells(course: Course, drill: Drill, row: Mapping[str, Any] | None, used: dict[str, int]) -> list[str]:
    points = course_module.drill_facts(course.root, drill.id)["points"]
    if row is None:
        status, score = NOT_CHECKED, f"- / {present.number(points)}"
    else:
        status = LIST_STATUS.get(row["status"], row["status"])
        score = "pending" if row["status"] == NOT_RUN else present.score_text(row["score"], row["max_score"])
        if row.get("profile") == QUICK_PROFILE:
            status += " *"
    style = table.STATUS_STYLE.get(row["status"], "") if row else "dim"
    hint_text = f"{used.get(drill.id, 0)} / {len(drill.hints)}" if drill.hints else "-"
    return [escape(drill.id), f"[{style}]{status}[/]" if style else status, score, hint_text]


def progress_lines(course: Course, rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Overall progress in words, and what to do next."""
    total = sum(course_module.drill_facts(course.root, i)["points"] or 0 for i in course.ids)
    score = sum(rows[i]["score"] for i in course.ids if i in rows)
    done = sum(1 for i in course.ids if i in rows and rows[i]["status"] == PASSED)
    lines = [f"progress: {done} of {len(course.ids)} drills done, "
             f"{present.number(score)} / {present.number(total)} points "
             f"({present.percent(score, total):.0f}%)"]
    if any(r.get("profile") == QUICK_PROFILE for r in rows.values()):
        lines.append("* from `torchdrill check` (quick: at most 25 examples per property); "
                     "`torchdrill grade` tries 100")
    following = next_unfinished(course, {i: r["status"] for i, r in rows.items()})
    lines.append(f"next: torchdrill check {_short(course, following)}" if following
                 else "every drill is done")
    return lines


def cmd_list(args: argparse.Namespace) -> int:
    where = place(args)
    results = last_results(where.results_path)
    console = table.make_console()
    render_list(where.course, results, hints.revealed(where.submission), console)
    if results is None:
        console.print(Text(f"(no results yet at {where.shown_path(where.results_path)}: "
                           "statuses appear after `torchdrill check NAME` or `torchdrill grade`)",
                           style="dim"))
    return EXIT_OK


# ------------------------------------------------------------------ hint

def current_drill(where: Place) -> str:
    """The drill a learner is on: the first not done, in course order."""
    following = next_unfinished(where.course, statuses(last_results(where.results_path)))
    if following is None:
        raise UsageError("every drill is done; name the drill whose hints you want")
    return following


def cmd_hint(args: argparse.Namespace) -> int:
    where = place(args)
    drill = where.course.drill(resolve(where.course, args.name) if args.name else current_drill(where))
    if not drill.hints:
        raise UsageError(f"drill {drill.id} has no hints in {where.root / course_module.COURSE_FILE}")
    before = len(hints.shown(where.submission, drill))
    revealed = hints.reveal_next(where.submission, drill)
    console = table.make_console()
    console.print(Text(f"{drill.id}: hint {len(revealed)} of {len(drill.hints)}\n", style="bold"))
    width = min(console.width, 88)
    for number, text in enumerate(revealed, start=1):
        style = "" if number > before else "dim"  # the new hint stands out
        wrapped = textwrap.fill(text, width, initial_indent=f"{number}. ", subsequent_indent="   ")
        console.print(Text(wrapped + "\n", style=style), soft_wrap=True)
    left = len(drill.hints) - len(revealed)
    if before == len(drill.hints):
        console.print(Text("that was the last hint; the drill's docstring has the full spec"))
    elif left:
        console.print(Text(f"{left} more: torchdrill hint {drill.name}", style="dim"))
    else:
        console.print(Text("that was the last hint", style="dim"))
    return EXIT_OK


# ------------------------------------------------------------------ watch

Saves = Iterable[Iterable[Path]]


def watch_loop(course: Course, start: str, saves: Saves, check_drill: Callable[[str], str],
               status_of: Callable[[], dict[str, str]], say: Callable[[str], None]) -> bool:
    """Check ``start``, then again after every batch of saved files.

    A save in another drill's file switches to that drill; a drill that is done
    hands over to the next unfinished one in course order. Returns True once every
    drill is done, False when ``saves`` runs out.
    """
    current = _settle(course, start, check_drill, status_of, say)
    if current is None:
        return True
    for changed in saves:
        target = _drill_for(course, changed, current)
        if target != current:
            say(f"switching to {target}")
        current = _settle(course, target, check_drill, status_of, say)
        if current is None:
            return True
    return False


def _settle(course: Course, drill_id: str, check_drill: Callable[[str], str],
            status_of: Callable[[], dict[str, str]], say: Callable[[str], None]) -> str | None:
    """Check ``drill_id``; while the checked drill is done, move on to the next
    unfinished one and check it. The drill to keep watching, or None if all are done."""
    for _ in range(len(course.ids) + 1):
        if check_drill(drill_id) != PASSED:
            return drill_id
        following = next_unfinished(course, status_of())
        if following is None:
            say("every drill is done: run `torchdrill grade` for the full grade")
            return None
        say(f"{drill_id} is done; moving on to {following}")
        drill_id = following
    return drill_id


def _drill_for(course: Course, changed: Iterable[Path], current: str) -> str:
    """The drill whose file was saved (the current one if it was among them)."""
    found = []
    for path in changed:
        try:
            found.append(course.resolve(str(path)))
        except CourseError:
            continue  # a helper module or another file: re-check the current drill
    return current if current in found or not found else found[0]


def file_saves(folder: Path) -> Iterator[list[Path]]:
    """Batches of saved ``.py`` files under ``folder``, as watchfiles reports them."""
    try:
        import watchfiles
    except ImportError:
        raise UsageError("torchdrill watch needs the watchfiles package: "
                             "pip install watchfiles (pinned in constraints.txt)") from None
    for changes in watchfiles.watch(folder, watch_filter=watchfiles.PythonFilter(), raise_interrupt=True):
        yield sorted({Path(p) for _, p in changes})


def cmd_watch(args: argparse.Namespace) -> int:
    where = place(args)
    start = resolve(where.course, args.name) if args.name else current_drill(where)
    console = table.make_console()

    def check_drill(drill_id: str) -> str:
        console.rule(Text(f"{time.strftime('%H:%M:%S')}  {drill_id}", style="dim"))
        return check(where, drill_id, console, args.timeout)

    def say(message: str) -> None:
        console.print(Text(f"\n>>> {message}", style="bold"))

    def saves() -> Iterator[list[Path]]:
        yield from file_saves(where.submission)

    console.print(Text(f"watching {where.shown_path(where.submission)} (Ctrl-C to stop)", style="dim"))
    try:
        watch_loop(where.course, start, saves(), check_drill,
                   lambda: statuses(last_results(where.results_path)), say)
    except KeyboardInterrupt:
        console.print(Text("\nstopped watching", style="dim"))
    return EXIT_OK
