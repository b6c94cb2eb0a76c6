"""How long each drill's grading may take, from the reference's own time on the suite.

A submission that answers every call just under ``--call-timeout`` never times out
a call; each property would then run until its test clock, a drill for minutes and
a submission for hours. So each drill gets a wall budget: ``FACTOR`` times what the
reference took on the same tests, plus ``MARGIN`` seconds. The reference's times
live in ``tests/reference_times.json`` (``bench/reference_times.py`` writes them),
each beside a hash of its drill's test file; a drill whose tests changed since, or
that has no time recorded, gets ``DEFAULT_SECONDS``. A submission's budget is the sum
of its drills'. Past a drill's budget its remaining properties are "timed out" at
once and grading moves on; the budgets used are recorded in results.json.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILE = "reference_times.json"
FACTOR = 10.0
MARGIN = 30.0
DEFAULT_SECONDS = 180.0
DEFAULT_CALL_TIMEOUT_S = 10.0  # wall-clock limit per call of the submission's code (--call-timeout)


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@dataclass
class Budgets:
    drills: dict[str, float] = field(default_factory=dict)  # drill id -> seconds
    source: dict[str, str] = field(default_factory=dict)  # drill id -> "reference" / why default

    def of(self, drill: str) -> float:
        return self.drills.get(drill, DEFAULT_SECONDS)

    def as_json(self) -> dict[str, Any]:
        return {"drills": {d: round(s, 1) for d, s in sorted(self.drills.items())},
                "factor": FACTOR, "margin_s": MARGIN, "source": dict(sorted(self.source.items()))}


def load(tests_dir: Path, tests: dict[str, Path], override: float | None = None) -> Budgets:
    """Budgets for the drills of ``tests`` (id -> test file); ``override``: one budget for
    every drill (``--drill-budget``)."""
    budgets = Budgets()
    if override is not None:
        for drill in tests:
            budgets.drills[drill], budgets.source[drill] = override, "--drill-budget"
        return budgets
    seconds = recorded(tests_dir, tests)
    for drill in tests:
        if drill in seconds:
            budgets.drills[drill] = FACTOR * seconds[drill] + MARGIN
            budgets.source[drill] = "reference"
        else:
            budgets.drills[drill] = DEFAULT_SECONDS
            budgets.source[drill] = "default (no reference time for these tests)"
    return budgets


def recorded(tests_dir: Path, tests: dict[str, Path]) -> dict[str, float]:
    """The reference's recorded seconds for the drills of ``tests`` whose test file is
    the one they were recorded with (a drill whose tests changed since has none)."""
    try:
        entries = json.loads((tests_dir / FILE).read_text(encoding="utf-8")).get("drills", {})
    except (OSError, ValueError, AttributeError):
        entries = {}
    seconds: dict[str, float] = {}
    for drill, path in tests.items():
        entry = entries.get(drill) if isinstance(entries, dict) else None
        try:
            current = file_hash(path)
        except OSError:
            current = None
        if isinstance(entry, dict) and entry.get("tests") == current \
                and isinstance(entry.get("seconds"), (int, float)):
            seconds[drill] = float(entry["seconds"])
    return seconds


def record(tests_dir: Path, tests: dict[str, Path], seconds: dict[str, float]) -> Path:
    """Write the reference's per-drill times (``bench/reference_times.py``)."""
    data = {"about": "the reference's grading time per drill (seconds, summed test durations) "
                     "and a hash of the drill's tests; grader/core/time_budgets.py derives each "
                     "drill's wall budget from them",
            "drills": {d: {"seconds": round(seconds[d], 2), "tests": file_hash(tests[d])}
                       for d in sorted(seconds) if d in tests}}
    path = tests_dir / FILE
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return path
