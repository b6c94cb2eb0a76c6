"""``torchdrill hint [NAME]``: the next of a drill's hints (the current drill's by
default), with the ones revealed before; which were revealed is kept beside the
learner's work (``grader.core.hints``), so the official grade sees them too.
"""

from __future__ import annotations

import argparse
import re
import textwrap

from rich.text import Text

from grader.core import drill_texts, hints, i18n, syllabus
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
from grader.core.syllabus import is_wide
from grader.learner.place import current_drill, place
from grader.reports import table


def cmd_hint(args: argparse.Namespace) -> int:
    where = place(args)
    drill = where.course.drill(where.course.resolve(args.name) if args.name else current_drill(where))
    if not drill.hints:
        raise UsageError(_("drill {drill} has no hints in {path}", drill=drill.id,
                           path=where.root / syllabus.COURSE_FILE))
    before = len(hints.shown(where.submission, drill))
    revealed = hints.reveal_next(where.submission, drill)
    said = drill_texts.hints(where.course, i18n.current().lang, drill)  # the same hints, in the learner's language
    console = table.make_console()
    console.print(Text(_("{drill}: hint {number} of {count}", drill=drill.id, number=len(revealed),
                         count=len(drill.hints)) + "\n", style="bold"))
    width = min(console.width, 88)
    for number, text in enumerate(said[:len(revealed)], start=1):
        style = "" if number > before else "dim"  # the new hint stands out
        wrapped = fill(text, width, f"{number}. ")
        console.print(Text(wrapped + "\n", style=style), soft_wrap=True)
    left = len(drill.hints) - len(revealed)
    if before == len(drill.hints):
        console.print(Text(_("that was the last hint; the drill's docstring has the full spec")))
    elif left:
        console.print(Text(_("{left} more: torchdrill hint {name}", left=left, name=drill.name), style="dim"))
    else:
        console.print(Text(_("that was the last hint"), style="dim"))
    return EXIT_OK


def fill(text: str, width: int, first: str = "", rest: str | None = None) -> str:
    """``text`` wrapped to ``width`` terminal cells, its first line after ``first``
    (``1. ``), the next after ``rest`` (default: spaces as wide as ``first``). English
    wraps as textwrap wraps it; text with wide characters (Chinese, two cells each)
    may break beside any of them, a Latin word stays whole, and closing punctuation
    never starts a line."""
    indent = " " * len(first) if rest is None else rest
    if not has_wide(text):
        return textwrap.fill(text, width, initial_indent=first, subsequent_indent=indent)
    tokens: list[str] = []  # runs of spaces, Latin words, single wide characters
    for tok in re.findall(r"\s+|[^\s]", text):
        if tokens and not tok.isspace() and not is_wide(tok) and \
                not tokens[-1][-1].isspace() and not is_wide(tokens[-1][-1]):
            tokens[-1] += tok
        else:
            tokens.append(tok)
    lines, line, fresh = [], first, True
    for tok in tokens:
        if tok.isspace():
            if not fresh and _cells(line) < width:
                line += " "
            continue
        if not fresh and _cells(line) + _cells(tok) > width and tok not in _NO_LINE_START:
            lines.append(line.rstrip())
            line = indent
        line += tok
        fresh = False
    lines.append(line.rstrip())
    return "\n".join(lines)


def _cells(text: str) -> int:
    return sum(2 if is_wide(ch) else 1 for ch in text)


_NO_LINE_START = frozenset("，。、：；！？）」』》”’")  # punctuation that ends the line before it


def has_wide(text: str) -> bool:
    """Whether ``text`` has a character two terminal cells wide (Chinese)."""
    return any(is_wide(ch) for ch in text)

