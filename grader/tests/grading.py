"""Grade a folder with the real grader, as ``python -m grader grade`` would in a fresh
interpreter (``grader.tests.warm``), for the engine's tests."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.core.results_json import Results
from grader.tests import warm

REPO = Path(__file__).resolve().parents[2]


def grade_process(submission: Path | str, out: Path, *args: str, timeout: float = 600,
                  prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``[PREFIX] python -m grader grade SUBMISSION --out OUT ARGS`` in the course;
    ``prefix`` wraps it (``unshare --user``: a grader that is not root)."""
    return warm.run(["-m", "grader", "grade", str(submission), "--out", str(out), "--course", str(REPO),
                     *args], REPO, timeout, prefix)


def run_grade(submission: Path | str, out: Path, *args: str, timeout: float = 600,
              prefix: Sequence[str] = ()) -> Results:
    """``grade_process`` that must succeed; returns results.json."""
    proc = grade_process(submission, out, *args, timeout=timeout, prefix=prefix)
    assert proc.returncode == 0, f"grading failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads((out / "results.json").read_text())


def grade_properties(submission: Path, out: Path, properties: Mapping[str, Sequence[str]],
                     *args: str, timeout: float = 600) -> Results:
    """Grade only the named properties (drill id -> test function names) of ``submission``,
    in-process in a fresh interpreter, through the one runner every command uses
    (``grader.grading.pipeline.grade_folder``); returns the results. ``args``: more pytest
    and grading options (``--no-shrink``, ``--isolation none``)."""
    from grader.core.syllabus import exercise_tests

    tests = exercise_tests(REPO)
    nodes = [f"{tests[drill]}::{name}" for drill, names in sorted(properties.items()) for name in names]
    out.mkdir(parents=True, exist_ok=True)
    code = ("import sys, json; from pathlib import Path; from grader.grading.pipeline import grade_folder; "
            "Path(sys.argv[3]).write_text(json.dumps(grade_folder(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[4:])))")
    proc = warm.run(["-c", code, str(REPO), str(submission), str(out / "results.json"), *nodes,
                     "-n", "0", *args], REPO, timeout)
    assert proc.returncode == 0, f"grading failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads((out / "results.json").read_text())


def outcomes_only(results: Results) -> dict[str, Any]:
    """What must be identical between two gradings of the same submission."""
    return {
        "score": results["score"],
        "max_score": results["max_score"],
        "exercises": [
            {k: v for k, v in ex.items() if k != "tests"}
            | {"tests": [{k: v for k, v in t.items() if k not in ("duration_s", "charged_s")}
                         for t in ex["tests"]]}
            for ex in results["exercises"]
        ],
    }


def exercise(results: Mapping[str, Any], exercise_id: str) -> dict[str, Any]:
    return next(e for e in results["exercises"] if e["id"] == exercise_id)


def base_name(test_name: str) -> str:
    """``test_gloo[3]`` -> ``test_gloo``."""
    return test_name.split("[", 1)[0]
