"""A notebook's grading shown where the learner wrote the code: its cells.

A notebook is graded through exercise files the grader extracted
(``grader.intake.notebooks.extract``), which the learner never saw. ``annotate``
records in the results which cell each function came from, and rewrites every
``<drill>.py, line N`` in a message as the notebook's cell and line, from the line
map the extraction kept.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

_FILE_LINE = re.compile(r'(?P<file>[\w./\\-]*?(?P<path>[\w-]+(?:/[\w-]+)*)\.py)(?P<sep>"?,) line (?P<line>\d+)')


def cell_line(rows: list[tuple[int, int, int, int]] | list[list[int]], line: int) -> tuple[int, int] | None:
    """(cell, line in cell) of line ``line`` of a drill's extracted file, or None."""
    for first, last, cell, cell_first in rows:
        if first <= line <= last:
            return cell, cell_first + line - first
    return None


def annotate(results: Any, info: dict[str, Any]) -> Any:
    """Record in ``results`` (in place; also returned) where each exercise's code came
    from (``ExerciseResult.source``), and in its messages every ``<drill>.py, line N``
    replaced by the notebook's cell and line (static flags get them beside). ``info`` is
    ``Extraction.as_json()``."""
    sources = info.get("sources") or {}
    maps = info.get("line_map") or {}
    notebook = info.get("notebook") or "the notebook"
    for ex in results.get("exercises", []):
        drill = ex.get("id")
        if drill not in sources or sources[drill] is None:
            continue
        ex["source"] = sources[drill]
        rows = maps.get(drill) or []
        for flag in ex.get("static_flags") or []:
            found = cell_line(rows, int(flag.get("line") or 0))
            if found:
                flag["cell"], flag["cell_line"] = found
        for t in ex.get("tests", []):
            if t.get("message"):
                t["message"] = _mark_cells(t["message"], drill, rows, notebook)
    return results


def _mark_cells(text: str, drill: str, rows: Any, notebook: str) -> str:
    tail = PurePosixPath(drill).as_posix()

    def mark(m: re.Match[str]) -> str:
        """``File "alice/tensors/one_hot.py", line 9`` -> ``File "hw.ipynb", cell 2, line 3``:
        the grader's copy of the cell's code is a file the learner never saw."""
        if not m.group("path").endswith(tail):
            return m.group(0)
        found = cell_line(rows, int(m.group("line")))
        if not found:
            return m.group(0)
        return f"{notebook}{m.group('sep')} cell {found[0]}, line {found[1]}"

    return _FILE_LINE.sub(mark, text)
