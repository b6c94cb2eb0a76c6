"""Grade a folder with the real CLI in a fresh interpreter, for the engine's tests."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def grade_process(submission: Path | str, out: Path, *args: str, timeout: float = 600,
                  prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``[PREFIX] python -m grader grade SUBMISSION --out OUT ARGS`` in the course;
    ``prefix`` wraps it (``unshare --user``: a grader that is not root)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "grader", "grade", str(submission), "--out", str(out),
         "--course", str(REPO), *args],
        capture_output=True, text=True, timeout=timeout, cwd=REPO)


def run_grade(submission: Path | str, out: Path, *args: str, timeout: float = 600,
              prefix: Sequence[str] = ()) -> dict[str, Any]:
    """``grade_process`` that must succeed; returns results.json."""
    proc = grade_process(submission, out, *args, timeout=timeout, prefix=prefix)
    assert proc.returncode == 0, f"grading failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads((out / "results.json").read_text())


def exercise(results: dict[str, Any], exercise_id: str) -> dict[str, Any]:
    return next(e for e in results["exercises"] if e["id"] == exercise_id)


def base_name(test_name: str) -> str:
    """``test_gloo[3]`` -> ``test_gloo``."""
    return test_name.split("[", 1)[0]
