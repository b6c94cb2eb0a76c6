"""``torchdrill check`` on a learner's first day: what it grades, what it prints.

A file named on the command line is the file graded (not this course's copy of the
drill), a file that does not load is reported once, and a ``print`` in a loop does
not flood the terminal.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from grader.core import results_json
from grader.learner.check import MAX_CHECK_OUTPUT
from grader.tests import warm
from grader.tests.grading import REPO

WRONG_DTYPE = '''\
import torch


def one_hot(labels, num_classes=-1):
    labels = labels.long()
    n = num_classes if num_classes != -1 else int(labels.max()) + 1
    return torch.zeros(*labels.shape, n).scatter_(-1, labels.unsqueeze(-1), 1)  # float32
'''

# The reference one_hot, printing 120,000 characters every call.
FLOOD = (REPO / "reference" / "tensors" / "one_hot.py").read_text().replace(
    "    labels = labels.long()\n", '    print("debug " * 20_000)\n    labels = labels.long()\n', 1)

NO_COLON = "import torch\n\n\ndef one_hot(labels, num_classes=-1)\n    return labels\n"


def _check(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``torchdrill check NAME ARGS`` in a fresh interpreter (a child of the warm server)."""
    return warm.run(["-m", "grader", "check", name, "--course", str(REPO), *args], REPO, 300)


def _drill_file(folder: Path, source: str) -> Path:
    path = folder / "tensors" / "one_hot.py"
    path.parent.mkdir(parents=True)
    path.write_text(source)
    return path


def test_a_file_named_on_the_command_line_is_the_file_graded(tmp_path):
    """Not the submission's copy of the drill (here the reference, which passes), and not
    recorded as the learner's own."""
    record = REPO / "reports" / "results.json"
    before = record.read_bytes() if record.exists() else None
    path = _drill_file(tmp_path / "elsewhere" / "exercises", WRONG_DTYPE)
    proc = _check(str(path), "--submission", str(REPO / "reference"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "dtype differs: got torch.float32, expected torch.int64" in proc.stdout
    assert "not recorded" in proc.stdout
    assert (record.read_bytes() if record.exists() else None) == before


def test_a_file_not_laid_out_like_exercises_is_refused(tmp_path):
    odd = tmp_path / "tensors" / "extra" / "one_hot.py"
    odd.parent.mkdir(parents=True)
    odd.write_text(WRONG_DTYPE)
    proc = _check(str(odd))
    assert proc.returncode == 2 and f"unknown drill {odd}: did you mean one_hot?" in proc.stderr


def test_a_file_that_does_not_load_is_reported_once(tmp_path):
    submission = tmp_path / "sub"
    _drill_file(submission, NO_COLON)
    proc = _check("one_hot", "--submission", str(submission), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert proc.stdout.count("SyntaxError: expected ':'") == 1, proc.stdout
    assert re.search(r"the same on \d+ more properties", proc.stdout), proc.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    tests = results["exercises"][0]["tests"]
    assert {t["outcome"] for t in tests} == {"error"}
    assert all(t["counterexample"] is None for t in tests), "no call was made: none is shown"


def test_a_flood_of_output_is_cut(tmp_path):
    submission = tmp_path / "sub"
    _drill_file(submission, FLOOD)
    proc = _check("one_hot", "--submission", str(submission), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(proc.stdout) + len(proc.stderr) < 2 * MAX_CHECK_OUTPUT
    assert "your output is cut here" in proc.stdout
    assert "characters of your output were not shown" in proc.stderr
    assert "tensors/one_hot  passed" in proc.stdout  # the verdict still comes after it


def test_check_refreshes_the_report_in_the_language_in_force_and_keeps_the_other_drills(tmp_path):
    """The report a check leaves is the learner's whole record, this drill's row new,
    in the language the check spoke; the other drills' rows are kept."""
    submission = tmp_path / "sub"
    _drill_file(submission, (REPO / "reference" / "tensors" / "one_hot.py").read_text())
    out = tmp_path / "reports"
    out.mkdir()
    earlier = {"id": "nn/conv_shapes", "title": "", "points": 10.0, "score": 10.0, "max_score": 10.0,
               "status": "passed", "static_flags": [],
               "tests": [{"name": "test_matches_conv", "outcome": "passed", "weight": 1.0, "message": "",
                          "counterexample": None, "duration_s": 0.1, "hidden": False, "markers": [],
                          "stdout": "", "stderr": ""}]}
    record = {"schema": results_json.SCHEMA_VERSION, "submission": str(submission.resolve()),
              "suite_hash": results_json.suite_hash(REPO / "tests"), "score": 10.0, "max_score": 10.0,
              "pending_points": 0.0, "graded_at": "2026-01-01T00:00:00+00:00", "grader_version": "0",
              "environment": {}, "exercises": [earlier]}
    (out / "results.json").write_text(json.dumps(record))
    (out / "index.html").write_text("<html lang=\"en\">stale</html>")
    proc = _check("one_hot", "--submission", str(submission), "--out", str(out), "--lang", "zh_CN")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = results_json.read(out / "results.json")
    assert [e["id"] for e in results["exercises"]] == ["tensors/one_hot", "nn/conv_shapes"]
    assert results["score"] == 20.0 and results["max_score"] == 20.0
    html = (out / "index.html").read_text()
    assert '<html lang="zh-CN"' in html and "stale" not in html
    assert 'data-exercise="tensors/one_hot"' in html and 'data-exercise="nn/conv_shapes"' in html
    assert html.count("来自快速检查") == 1  # the checked drill's card says how few examples it tried
