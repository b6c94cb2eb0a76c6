"""Progressive hints: which ones a learner has revealed, kept beside their work.

The state lives in ``<submission>/.torchdrill-hints.json`` (``exercises/`` for a
learner), so it travels with a handed-in folder and the official grade can
record how many hints each drill used (``hints_used`` on each exercise of
``results.json``). It only informs: hints never cost points.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.core import sources
from grader.core.files import write_atomically
from grader.core.syllabus import Drill

HINTS_FILE = ".torchdrill-hints.json"
SCHEMA = 1
MAX_STATE_BYTES = 64 * 1024


def state_path(submission: Path) -> Path:
    return submission / HINTS_FILE


def revealed(submission: Path) -> dict[str, int]:
    """Drill id -> how many of its hints were revealed (an unreadable file counts as none)."""
    try:  # the learner's own file: read as a source is (no link, no FIFO, bounded)
        raw = sources.read(state_path(submission), limit=MAX_STATE_BYTES)
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (OSError, ValueError):
        return {}
    counts = data.get("revealed") if isinstance(data, dict) else None
    if not isinstance(counts, dict):
        return {}
    return {k: v for k, v in counts.items() if isinstance(k, str) and isinstance(v, int) and v > 0}


def shown(submission: Path, drill: Drill) -> list[str]:
    """The hints of ``drill`` revealed so far, in order."""
    return list(drill.hints[:revealed(submission).get(drill.id, 0)])


def reveal_next(submission: Path, drill: Drill) -> list[str]:
    """Reveal one more hint of ``drill`` (if any is left); return all revealed so far."""
    counts = revealed(submission)
    count = min(counts.get(drill.id, 0) + 1, len(drill.hints))
    if count and count != counts.get(drill.id, 0):
        counts[drill.id] = count
        _write(state_path(submission), {"schema": SCHEMA, "revealed": dict(sorted(counts.items()))})
    return list(drill.hints[:count])


def _write(path: Path, data: dict) -> None:
    """Atomically: a crash never leaves half a file."""
    write_atomically(path, json.dumps(data, indent=1) + "\n")
