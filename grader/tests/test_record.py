"""The learner's record (``reports/results.json``): a grading of some drills updates
those drills and keeps the rest, so ``list``, the report and the score table agree.

The rules (``grader.core.record``) are tested on hand-made results; one end-to-end
test grades two small drills of the reference, one ``grade --only`` each.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from grader.cli import main
from grader.core import record, results_json
from grader.core.results_json import Results
from grader.tests.grading import REPO, grade_process

ORDER = ["tensors/one_hot", "nn/conv_shapes", "data/batching"]


def _row(drill_id: str, *outcomes: str, points: float = 10.0) -> dict[str, Any]:
    """A drill's row with one property of weight 1 per outcome (default: one passed);
    ``_results`` scores it."""
    return {"id": drill_id, "title": "", "points": points, "score": 0.0, "max_score": 0.0,
            "status": "not_run", "static_flags": [],
            "tests": [{"name": f"test_{i}", "outcome": outcome, "weight": 1.0, "message": "",
                       "counterexample": None, "duration_s": 0.1, "hidden": False, "markers": [],
                       "stdout": "", "stderr": ""} for i, outcome in enumerate(outcomes or ["passed"])]}


def _results(*rows: dict[str, Any], submission: str = "/sub", suite: str | None = "s1",
             graded_at: str = "2026-01-01T00:00:00+00:00") -> Results:
    return results_json.rescore(cast(Results, {
        "schema": results_json.SCHEMA_VERSION, "submission": submission, "suite_hash": suite,
        "score": 0.0, "max_score": 0.0, "pending_points": 0.0, "graded_at": graded_at,
        "grader_version": "0", "environment": {}, "exercises": list(rows)}))


# ------------------------------------------------------------------ the rules

def test_a_grading_of_some_drills_replaces_those_and_keeps_the_rest():
    old = _results(_row("data/batching"), _row("tensors/one_hot", "failed"))
    new = _results(_row("tensors/one_hot"), _row("nn/conv_shapes", "passed", "failed"))
    up = record.combine(old, new, ORDER)
    assert [e["id"] for e in up.results["exercises"]] == ORDER  # course order
    assert up.results["exercises"][0]["status"] == "passed"
    assert (up.results["score"], up.results["max_score"]) == (25, 30)  # totals of every row kept
    assert up.kept == ["data/batching"] and up.replaced is None


@pytest.mark.parametrize("other, why", [
    ({"submission": "/another"}, "another submission"),
    ({"suite": "s2"}, "other tests"),
    ({"suite": None}, "other tests"),  # a record that does not say which tests graded it
])
def test_results_of_another_submission_or_suite_are_replaced_and_said_so(other, why):
    old = _results(_row("data/batching"), **other)
    new = _results(_row("tensors/one_hot"))
    up = record.combine(old, new, ORDER)
    assert up.results == new and up.kept == []
    assert up.replaced is not None and why in up.replaced


def test_the_same_folder_by_another_path_is_the_same_submission(tmp_path):
    real = tmp_path / "exercises"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    old = _results(_row("data/batching"), submission=str(tmp_path / "link"))
    up = record.combine(old, _results(_row("tensors/one_hot"), submission=str(real)), ORDER)
    assert up.kept == ["data/batching"]


@pytest.mark.parametrize("text, why", [
    ("{not json", "not a results file"),
    ('{"schema": 0, "exercises": []}', "not a results file"),  # an older torchdrill's
    ('[1, 2]', "not a results file"),
])
def test_an_unreadable_record_is_replaced_and_said_so(tmp_path, text, why):
    path = tmp_path / "results.json"
    path.write_text(text)
    new = _results(_row("tensors/one_hot"))
    up = record.update(path, new, ORDER)
    assert up.results == new and up.replaced is not None and why in up.replaced
    assert results_json.read(path) == new


def test_update_writes_the_record_and_renders_under_the_lock(tmp_path):
    path = tmp_path / "reports" / "results.json"  # the folder does not exist yet
    record.update(path, _results(_row("data/batching")), ORDER)
    seen: list[Results] = []
    up = record.update(path, _results(_row("tensors/one_hot")), ORDER, then=seen.append)
    assert seen == [up.results] and results_json.read(path) == up.results
    assert [e["id"] for e in up.results["exercises"]] == ["tensors/one_hot", "data/batching"]
    assert not [p.name for p in path.parent.iterdir() if p.name != "results.json"], "no temporary file left"


def test_a_second_update_waits_for_the_first(tmp_path):
    """Two checks at once: the second reads the record only after the first wrote it, so
    neither drill is lost."""
    path = tmp_path / "results.json"
    record.update(path, _results(_row("data/batching")), ORDER)
    second = threading.Thread(target=record.update, args=(path, _results(_row("tensors/one_hot")), ORDER))
    with record.locked(tmp_path):  # the first, between its read and its write
        second.start()
        second.join(timeout=1.0)
        assert second.is_alive(), "the second update went ahead while the record was locked"
        results_json.write(record.combine(results_json.read(path), _results(_row("nn/conv_shapes")),
                                          ORDER).results, path)
    second.join()
    assert [e["id"] for e in results_json.read(path)["exercises"]] == ORDER


def test_an_interrupted_render_leaves_the_record_written_and_no_lock_held(tmp_path):
    path = tmp_path / "results.json"

    def interrupted(results: Results) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        record.update(path, _results(_row("data/batching")), ORDER, then=interrupted)
    assert [e["id"] for e in results_json.read(path)["exercises"]] == ["data/batching"]
    up = record.update(path, _results(_row("tensors/one_hot")), ORDER)  # the lock was let go
    assert up.kept == ["data/batching"]


# ------------------------------------------------------------------ grade --only, twice

def test_grade_only_a_then_only_b_keeps_both_in_list_and_in_the_report(tmp_path, capsys):
    out = tmp_path / "reports"
    first, second = "nn/conv_shapes", "data/batching"
    for drill in (first, second):
        proc = grade_process(REPO / "reference", out, "--only", drill, "--isolation", "none",
                             "--profile", "torchdrill-quick")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 drill graded earlier is kept" in proc.stdout, proc.stdout
    results = results_json.read(out / "results.json")
    rows = {e["id"]: e for e in results["exercises"]}
    assert set(rows) == {first, second}
    assert results["score"] == sum(e["score"] for e in rows.values()) > 0
    assert results["max_score"] == sum(e["max_score"] for e in rows.values())

    assert main(["list", "--course", str(REPO), "--results", str(out / "results.json")]) == 0
    listed = capsys.readouterr().out
    for drill in (first, second):
        assert re.search(rf"\| {re.escape(drill)} +\| done ", listed), listed
    assert re.search(r"progress: 2 of \d+ drills done", listed), listed

    html = (out / "index.html").read_text()
    for drill in (first, second):
        assert f'data-exercise="{drill}"' in html


def test_grade_into_a_read_only_folder_says_so_and_keeps_the_old_record(tmp_path, monkeypatch, capsys):
    """The grading's table is still printed; the record is as it was; exit 2 with a sentence."""
    from grader.grading import commands

    def refuse(path: Path, *args: Any, **kwargs: Any) -> record.Update:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(commands.record, "update", refuse)
    results = _results(_row("data/batching"))
    monkeypatch.setattr(commands, "grade", lambda *a, **k: results)
    monkeypatch.setattr(commands.zygote, "start_early", lambda *a, **k: None)
    code = main(["grade", str(REPO / "reference"), "--only", "data/batching", "--course", str(REPO),
                 "--out", str(tmp_path), "--isolation", "none"])
    captured = capsys.readouterr()
    assert code == 2
    assert "data/batching" in captured.out  # the table
    assert "cannot record this grading" in captured.err and "Permission denied" in captured.err
    assert not (tmp_path / "index.html").exists()


def test_a_hand_edited_record_is_scored_by_its_outcomes(tmp_path, capsys):
    """A row without its score or status does not stop ``list`` (it is unchecked there);
    an update scores every row by its outcomes, so a row claiming points its tests did not
    earn does not survive it as written."""
    path = tmp_path / "results.json"
    claimed = _row("data/batching", "failed")
    claimed.update(score=10.0, status="passed")
    bare = {"id": "nn/conv_shapes", "points": 10.0, "tests": _row("nn/conv_shapes")["tests"]}
    path.write_text(json.dumps(_results(claimed) | {"exercises": [claimed, bare]}))
    assert main(["list", "--course", str(REPO), "--results", str(path)]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"\| nn/conv_shapes +\| not checked ", listed), listed
    up = record.update(path, _results(_row("tensors/one_hot")), ORDER)
    rows = {e["id"]: e for e in up.results["exercises"]}
    assert (rows["data/batching"]["score"], rows["data/batching"]["status"]) == (0.0, "failed")
    assert up.results["score"] == 20.0
