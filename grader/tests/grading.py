"""Grade a folder with the real CLI in a fresh interpreter, for the engine's tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def run_grade(submission: Path | str, out: Path, *args: str, timeout: float = 600) -> dict[str, Any]:
    """``python -m grader grade SUBMISSION --out OUT ARGS``; returns results.json."""
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(submission), "--out", str(out),
         "--course", str(REPO), *args],
        capture_output=True, text=True, timeout=timeout, cwd=REPO)
    assert proc.returncode == 0, f"grading failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads((out / "results.json").read_text())


def exercise(results: dict[str, Any], exercise_id: str) -> dict[str, Any]:
    return next(e for e in results["exercises"] if e["id"] == exercise_id)


def base_name(test_name: str) -> str:
    """``test_gloo[3]`` -> ``test_gloo``."""
    return test_name.split("[", 1)[0]
