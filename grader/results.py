"""``results.json``: the one record of a grading run; reports are made from it.

Written atomically (temporary file, then rename), so a crash never leaves a
half-written file behind.
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import grader
from grader.outcomes import NOT_RUN
from grader.files import write_atomically
from grader.scoring import score_exercise

SCHEMA_VERSION = 1


@dataclass
class TestRecord:
    exercise: str
    name: str
    outcome: str
    weight: float = 1.0
    message: str = ""
    counterexample: dict[str, Any] | None = None
    duration_s: float = 0.0
    hidden: bool = False
    markers: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


@dataclass
class ExerciseInfo:
    id: str
    points: float
    title: str = ""
    # grader.scan findings (``Finding.as_json()``): shown beside the score, never scored
    static_flags: list[dict[str, Any]] = field(default_factory=list)


def suite_hash(tests_dir: Path) -> str:
    """A hash of the test suite (every file under tests/) and the grader version:
    two gradings with the same hash used the same properties and examples."""
    digest = hashlib.sha256(grader.__version__.encode())
    for path in sorted(p for p in tests_dir.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(path.relative_to(tests_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build(submission: str, exercises: dict[str, ExerciseInfo],
          tests: list[TestRecord], environment: dict[str, Any] | None = None,
          suite: str | None = None) -> dict[str, Any]:
    """Assemble the results document from per-test records (scores computed here)."""
    by_exercise: dict[str, list[TestRecord]] = {eid: [] for eid in sorted(exercises)}
    for t in tests:
        by_exercise.setdefault(t.exercise, []).append(t)
    rows = []
    for eid, records in by_exercise.items():
        info = exercises[eid]
        records.sort(key=lambda r: r.name)
        scored = score_exercise(info.points, [(r.outcome, r.weight) for r in records])
        rows.append({
            "id": eid,
            "title": info.title,
            "points": info.points,
            "score": scored.score,
            "max_score": scored.max_score,
            "status": scored.status,
            "static_flags": list(info.static_flags),
            "tests": [_test_json(r) for r in records],
        })
    return {
        "schema": SCHEMA_VERSION,
        "submission": submission,
        "score": round(sum(r["score"] for r in rows), 4),
        "max_score": round(sum(r["max_score"] for r in rows), 4),
        "pending_points": round(sum(r["points"] for r in rows if r["status"] == NOT_RUN), 4),
        "suite_hash": suite,
        "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "grader_version": grader.__version__,
        "environment": {"python": platform.python_version(), **(environment or {})},
        "exercises": rows,
    }


def _test_json(r: TestRecord) -> dict[str, Any]:
    d = asdict(r)
    del d["exercise"]
    d["duration_s"] = round(d["duration_s"], 4)
    return d


def write(results: dict[str, Any], path: Path) -> None:
    write_atomically(path, json.dumps(results, indent=1, sort_keys=False) + "\n")


def read(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"{path} is not a torchdrill results file (schema {SCHEMA_VERSION})")
    for exercise in data.get("exercises") or []:  # written before the static scan existed
        if isinstance(exercise, dict):
            exercise.setdefault("static_flags", [])
    return data


def verdicts(results: dict[str, Any]) -> dict[str, Any]:
    """What must be identical between a grading with shrinking and one without: the
    scores, and whether each property passed, lost its points or did not count (the
    kind of a loss may differ: the shrinker can walk from a wrong answer to a smaller
    input that raises)."""
    lost = {"failed", "error", "timed_out"}
    return {"score": results["score"],
            **{e["id"]: (e["score"], [(t["name"], "lost" if t["outcome"] in lost else t["outcome"])
                                      for t in e["tests"]])
               for e in results["exercises"]}}


def outcomes_only(results: dict[str, Any]) -> dict[str, Any]:
    """What must be identical between two gradings of the same submission."""
    return {
        "score": results["score"],
        "max_score": results["max_score"],
        "exercises": [
            {k: v for k, v in ex.items() if k != "tests"}
            | {"tests": [{k: v for k, v in t.items() if k != "duration_s"} for t in ex["tests"]]}
            for ex in results["exercises"]
        ],
    }
