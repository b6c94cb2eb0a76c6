"""``torchdrill watch [NAME]``: check a drill again every time its file is saved, and
move on to the next unfinished drill once it is done.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from rich.text import Text

from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
from grader.core.outcomes import PASSED
from grader.core.syllabus import Course, CourseError
from grader.learner import warm
from grader.learner.check import check
from grader.learner.place import current_drill, last_results, next_unfinished, place, statuses
from grader.reports import table

WATCH_TIMEOUT_S = 60.0

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
            say(_("switching to {drill}", drill=target))
        current = _settle(course, target, check_drill, status_of, say)
        if current is None:
            return True
    return False


def _settle(course: Course, drill_id: str, check_drill: Callable[[str], str],
            status_of: Callable[[], dict[str, str]], say: Callable[[str], None]) -> str | None:
    """Check ``drill_id``; while the checked drill is done, move on to the next
    unfinished one and check it. The drill to keep watching, or None if all are done."""
    for _attempt in range(len(course.ids) + 1):
        if check_drill(drill_id) != PASSED:
            return drill_id
        following = next_unfinished(course, status_of())
        if following is None:
            say(_("every drill is done: run `torchdrill grade` for the full grade"))
            return None
        say(_("{drill} is done; moving on to {following}", drill=drill_id, following=following))
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
        raise UsageError(_("torchdrill watch needs the watchfiles package: "
                           "pip install watchfiles (pinned in constraints.txt)")) from None
    for changes in watchfiles.watch(folder, watch_filter=watchfiles.PythonFilter(), raise_interrupt=True):
        yield sorted({Path(p) for _change, p in changes})


def cmd_watch(args: argparse.Namespace) -> int:
    where = place(args)
    warm.start()  # a check typed beside the watch is served warm too
    start = where.course.resolve(args.name) if args.name else current_drill(where)
    console = table.make_console()

    def check_drill(drill_id: str) -> str:
        console.rule(Text(f"{time.strftime('%H:%M:%S')}  {drill_id}", style="dim"))
        return check(where, drill_id, console, args.timeout)

    def say(message: str) -> None:
        console.print(Text(f"\n>>> {message}", style="bold"))

    def saves() -> Iterator[list[Path]]:
        yield from file_saves(where.submission)

    console.print(Text(_("watching {path} (Ctrl-C to stop)", path=where.shown_path(where.submission)),
                       style="dim"))
    try:
        watch_loop(where.course, start, saves(), check_drill,
                   lambda: statuses(last_results(where.results_path)), say)
    except KeyboardInterrupt:
        console.print(Text("\n" + _("stopped watching"), style="dim"))
    return EXIT_OK
