"""``torchdrill hint [NAME]``: the next of a drill's hints (the current drill's by
default), with the ones revealed before; which were revealed is kept beside the
learner's work (``grader.core.hints``), so the official grade sees them too.
"""

from __future__ import annotations

import argparse
import textwrap

from rich.text import Text

from grader.core import hints, syllabus
from grader.core.errors import EXIT_OK, UsageError
from grader.learner.place import current_drill, place
from grader.reports import table


def cmd_hint(args: argparse.Namespace) -> int:
    where = place(args)
    drill = where.course.drill(where.course.resolve(args.name) if args.name else current_drill(where))
    if not drill.hints:
        raise UsageError(f"drill {drill.id} has no hints in {where.root / syllabus.COURSE_FILE}")
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
