"""The class gradebook (grader/classroom/gradebook.py): schema versions, records, merges, and
that a writer killed with SIGKILL never leaves a half-recorded submission."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from grader.classroom import gradebook
from grader.classroom.gradebook import Gradebook, GradebookError
from grader.core import results_json
from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT
from grader.core.results_json import Results, ResultsError, fold, rescore

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
SUITE = "suite-1"


def half_finished() -> Results:
    """A real ``torchdrill grade`` results dict (51 tests, two ``cuda`` tests not run)."""
    results = json.loads((DATA / "half_finished_results.json").read_text())
    results["suite_hash"] = SUITE
    results["environment"]["isolation"] = {"mode": "sandbox", "layers": {"seccomp": "on"}}
    return results


def small(outcomes: dict[str, str] | None = None, suite: str | None = SUITE) -> Results:
    """A results dict built by ``results.build``: two CPU exercises and one whose
    only tests need CUDA (pending on a CPU runner). ``outcomes`` overrides by test id."""
    outcomes = outcomes or {}
    exercises = {"tensors/one_hot": results_json.ExerciseInfo("tensors/one_hot", 10, "One-hot"),
                 "autograd/linear": results_json.ExerciseInfo("autograd/linear", 6, "Linear"),
                 "cuda/pinned": results_json.ExerciseInfo("cuda/pinned", 4, "Pinned")}
    plan = [("tensors/one_hot", "test_matches", PASSED, 3.0),
            ("tensors/one_hot", "test_dtype", FAILED, 1.0),
            ("tensors/one_hot", "test_on_gpu", NOT_RUN, 2.0),
            ("autograd/linear", "test_backward", ERROR, 2.0),
            ("autograd/linear", "test_shapes", PASSED, 1.0),
            ("cuda/pinned", "test_overlap", NOT_RUN, 1.0),
            ("cuda/pinned", "test_pinned", NOT_RUN, 1.0)]
    tests = []
    for eid, name, outcome, weight in plan:
        outcome = outcomes.get(f"{eid}::{name}", outcome)
        tests.append(results_json.TestRecord(
            eid, name, outcome, weight,
            message="" if outcome in (PASSED, NOT_RUN) else f"{name} lost",
            counterexample={"args": [1, 2]} if outcome == FAILED else None,
            duration_s=0.25, markers=["cuda"] if "gpu" in name or eid == "cuda/pinned" else []))
    return results_json.build("/tmp/sub", exercises, tests,
                                {"isolation": {"mode": "process"}}, suite)


def without_messages(results: Results) -> dict[str, Any]:
    """``results`` less what ``small`` derives from outcomes besides scores."""
    return results | {"exercises": [ex | {"tests": [{k: v for k, v in t.items()
                                                     if k not in ("message", "counterexample")}
                                                    for t in ex["tests"]]}
                                     for ex in results["exercises"]]}


@pytest.fixture
def book(tmp_path: Path):
    with Gradebook.open(tmp_path / "out" / "gradebook.sqlite") as gb:
        yield gb


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


# ---------------------------------------------------------------- opening, schema

def test_new_gradebook_is_versioned_wal_full_sync_with_foreign_keys(tmp_path):
    path = tmp_path / "a" / "b" / "gradebook.sqlite"  # parents created
    with Gradebook.open(path) as gb:
        pragma = lambda name: gb._db.execute(f"PRAGMA {name}").fetchone()[0]
        assert pragma("user_version") == gradebook.current_version() == len(gradebook.MIGRATIONS)
        assert pragma("application_id") == gradebook.APPLICATION_ID
        assert pragma("journal_mode") == "wal"
        assert pragma("synchronous") == 2  # FULL
        assert pragma("foreign_keys") == 1
    db = raw(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"students", "submissions", "test_results", "problems",  # version 1
                      "submission_times", "extensions", "overrides", "decisions", "grade_changes"}  # 2: the term
    insert = ("INSERT INTO submissions (student, content_hash, graded_at, recorded_at, score, "
              "max_score, pending_points, wall_s, tests_s, worker, results_json, current) "
              "VALUES (?, 'h', 't', 't', 0, 0, 0, 0, 0, 'w', '{}', 1)")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("BEGIN")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):  # no such student
        db.execute(insert, ("nobody",))
    db.execute("INSERT INTO students VALUES ('s', 't')")
    db.execute(insert, ("s",))
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):  # a second current submission
        db.execute(insert, ("s",))
    db.execute("ROLLBACK")
    db.close()
    with Gradebook.open(path) as gb:  # reopening an up-to-date gradebook changes nothing
        assert gb.current() == {}


def test_an_empty_file_becomes_a_gradebook(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    path.touch()  # e.g. made by a previous run that died before its first write
    with Gradebook.open(path) as gb:
        gb.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    with Gradebook.open(path) as gb:
        assert list(gb.current()) == ["alice"]


def _add_column(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE submissions ADD COLUMN late INTEGER NOT NULL DEFAULT 0")


def test_an_older_gradebook_is_migrated_and_keeps_its_data(tmp_path, monkeypatch):
    path = tmp_path / "gradebook.sqlite"
    with Gradebook.open(path) as gb:
        gb.record("alice", "h1", small(), wall_s=1, tests_s=0.5, worker="w")
        gb.record_problem("bob", "bad zip")
    old = gradebook.current_version()
    monkeypatch.setattr(gradebook, "MIGRATIONS", gradebook.MIGRATIONS + (_add_column,))
    with Gradebook.open(path) as gb:
        assert gb._db.execute("PRAGMA user_version").fetchone()[0] == old + 1
        assert gb._db.execute("SELECT late FROM submissions").fetchall() == [(0,)]
        assert gb.current() == {"alice": small() | {"graded_at": gb.current()["alice"]["graded_at"]}}
        assert gb.problems() == {"bob": "bad zip"}
        gb.record("carol", "h2", small(), wall_s=1, tests_s=0.5, worker="w")  # still writable
        assert sorted(gb.current()) == ["alice", "carol"]


def test_a_failing_migration_leaves_the_gradebook_at_its_old_version(tmp_path, monkeypatch):
    path = tmp_path / "gradebook.sqlite"
    Gradebook.open(path).close()
    old = gradebook.current_version()

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        db.execute("ALTER TABLE no_such_table ADD COLUMN y")

    monkeypatch.setattr(gradebook, "MIGRATIONS", gradebook.MIGRATIONS + (broken,))
    with pytest.raises(GradebookError, match=rf"{path.name}.*from version {old} to {old + 1} failed"):
        Gradebook.open(path)
    db = raw(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == old
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone() == (0,)
    db.close()
    monkeypatch.undo()
    Gradebook.open(path).close()


def test_a_newer_gradebook_is_refused_untouched(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    Gradebook.open(path).close()
    db = raw(path)
    db.execute(f"PRAGMA user_version = {gradebook.current_version() + 1}")
    db.close()
    before = path.read_bytes()
    with pytest.raises(GradebookError, match=rf"{path}: was written by a newer torchdrill"):
        Gradebook.open(path)
    assert path.read_bytes() == before


def test_files_that_are_not_gradebooks_are_refused_untouched(tmp_path):
    text = tmp_path / "results.json"
    text.write_text('{"schema": 1}')
    with pytest.raises(GradebookError, match=rf"{text}: is not a torchdrill gradebook \(not a SQLite"):
        Gradebook.open(text)
    assert text.read_text() == '{"schema": 1}'

    other = tmp_path / "other.sqlite"
    db = raw(other)
    db.execute("CREATE TABLE notes (x)")
    db.close()
    before = other.read_bytes()
    with pytest.raises(GradebookError, match=rf"{other}: is a SQLite database but not a torchdrill"):
        Gradebook.open(other)
    assert other.read_bytes() == before  # not even switched to WAL

    db = raw(other)
    db.execute("PRAGMA user_version = 1")  # versioned, but someone else's
    db.close()
    with pytest.raises(GradebookError, match="not a torchdrill gradebook"):
        Gradebook.open(other)

    with pytest.raises(GradebookError, match="is a folder"):
        Gradebook.open(tmp_path)


# ---------------------------------------------------------------- record, current, history

def test_record_and_current(book):
    first = book.record("bob", "hb", half_finished(), wall_s=12.5, tests_s=9.25, worker="dask-1")
    second = book.record("alice", "ha", small(), wall_s=3.0, tests_s=1.5, worker="pool-0")
    assert first != second
    current = book.current()
    assert list(current) == ["alice", "bob"]  # sorted by student
    assert current["bob"] == half_finished()  # the whole results dict, as given
    rows = book.submission_rows()
    assert [(r.student, r.content_hash, r.wall_s, r.tests_s, r.worker, r.current) for r in rows] == \
        [("alice", "ha", 3.0, 1.5, "pool-0", True), ("bob", "hb", 12.5, 9.25, "dask-1", True)]
    bob = rows[1]
    assert (bob.score, bob.max_score, bob.pending_points) == (8.2692, 75.0, 0.0)
    assert bob.suite_hash == SUITE and bob.graded_at == "2026-11-22T19:12:28+00:00"
    assert bob.isolation == {"mode": "sandbox", "layers": {"seccomp": "on"}}
    assert time.strptime(bob.recorded_at, "%Y-%m-%dT%H:%M:%S+00:00")  # ISO UTC seconds
    assert book.students() == {"alice": current["alice"]["graded_at"],
                               "bob": "2026-11-22T19:12:28+00:00"}


def test_test_rows_carry_each_tests_points(book):
    book.record("alice", "ha", small(), wall_s=1, tests_s=1, worker="w")
    rows = {r.test_id: r for r in book.test_rows()}
    assert len(rows) == 7
    # one_hot: 10 points, weights run 3 + 1 (the gpu test is not run): 3/4 of 10 for the pass
    assert rows["tensors/one_hot::test_matches"].points == 7.5
    assert rows["tensors/one_hot::test_dtype"].points == 0.0
    assert rows["tensors/one_hot::test_dtype"].counterexample == {"args": [1, 2]}
    assert rows["tensors/one_hot::test_on_gpu"].outcome == NOT_RUN
    assert rows["tensors/one_hot::test_on_gpu"].points == 0.0
    assert rows["autograd/linear::test_shapes"].points == 2.0  # 6 x 1/3
    assert rows["autograd/linear::test_backward"].message == "test_backward lost"
    assert rows["autograd/linear::test_backward"].counterexample is None
    assert sum(r.points for r in rows.values()) == small()["score"] == 9.5

    book.record("bob", "hb", half_finished(), wall_s=1, tests_s=1, worker="w")
    bob = [r for r in book.test_rows() if r.student == "bob"]
    assert len(bob) == sum(len(ex["tests"]) for ex in half_finished()["exercises"])
    assert round(sum(r.points for r in bob), 4) == half_finished()["score"]
    assert [r.test_id for r in book.test_rows()] == sorted(
        [r.test_id for r in book.test_rows() if r.student == "alice"]) + sorted(r.test_id for r in bob)


def test_rerecording_keeps_history_with_one_current_submission(book):
    first = book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    better = small({"tensors/one_hot::test_dtype": PASSED})
    second = book.record("alice", "h2", better, wall_s=1, tests_s=1, worker="w")
    forced = book.record("alice", "h2", better, wall_s=2, tests_s=1, worker="w")  # --force
    assert [(r.id, r.content_hash, r.current) for r in book.history("alice")] == \
        [(first, "h1", False), (second, "h2", False), (forced, "h2", True)]
    assert list(book.current()) == ["alice"]
    assert book.current()["alice"]["score"] == 12.0
    assert [r.wall_s for r in book.submission_rows()] == [2.0]
    assert book.results_of(first)["score"] == 9.5  # old results are kept
    assert {r.submission for r in book.test_rows()} == {forced}  # only the current one's tests


def test_is_graded_needs_the_current_content_and_the_same_suite(book):
    assert not book.is_graded("alice", "h1", SUITE)
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    assert book.is_graded("alice", "h1", SUITE)
    assert not book.is_graded("alice", "h1", "suite-2")  # tests changed since
    assert not book.is_graded("alice", "h9", SUITE)
    assert not book.is_graded("bob", "h1", SUITE)
    book.record("alice", "h2", small(), wall_s=1, tests_s=1, worker="w")
    assert not book.is_graded("alice", "h1", SUITE)  # no longer the current submission
    book.record("carol", "h3", small(suite=None), wall_s=1, tests_s=1, worker="w")
    assert not book.is_graded("carol", "h3", None)  # an unknown suite is never "the same"


def test_problems_are_recorded_replaced_and_cleared_by_a_later_grade(book):
    book.record_problem("zed", "empty folder")
    book.record_problem("bob", "bad zip: not a zip file")
    book.record_problem("alice", "grader failed: exit 1")
    book.record_problem("bob", "bad zip: truncated")
    assert book.problems() == {"alice": "grader failed: exit 1", "bob": "bad zip: truncated",
                               "zed": "empty folder"}
    assert list(book.problems()) == ["alice", "bob", "zed"]
    book.record("bob", "hb", small(), wall_s=1, tests_s=1, worker="w")
    assert book.problems() == {"alice": "grader failed: exit 1", "zed": "empty folder"}
    book.record_problem("bob", "bad zip again")  # a later bad upload: the grade stays current
    assert book.problems()["bob"] == "bad zip again"
    assert list(book.current()) == ["bob"]


def test_a_refused_record_writes_nothing(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    broken = small()
    broken["exercises"][0]["tests"].append(broken["exercises"][0]["tests"][0].copy())  # duplicate
    with pytest.raises(GradebookError, match="results for 'alice'.*appears twice"):
        book.record("alice", "h2", broken, wall_s=1, tests_s=1, worker="w")
    bad = small()
    bad["exercises"][1]["tests"][0]["outcome"] = "exploded"
    with pytest.raises(GradebookError, match="unknown outcome 'exploded'"):
        book.record("bob", "h2", bad, wall_s=1, tests_s=1, worker="w")
    with pytest.raises(GradebookError, match="schema 1"):
        book.record("bob", "h2", {"score": 1}, wall_s=1, tests_s=1, worker="w")
    assert [r.content_hash for r in book.history("alice")] == ["h1"]
    assert list(book.students()) == ["alice"]


def test_a_database_error_mid_record_rolls_the_whole_submission_back(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    book.record_problem("alice", "bad zip")
    # a trigger makes the last statement of record() (clearing the problem) fail
    book._db.execute("CREATE TRIGGER no_clear BEFORE DELETE ON problems "
                     "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    with pytest.raises(GradebookError, match=r"gradebook.sqlite: cannot record the submission of "
                                             r"'alice': disk says no"):
        book.record("alice", "h2", small(), wall_s=1, tests_s=1, worker="w")
    assert [(r.content_hash, r.current) for r in book.history("alice")] == [("h1", True)]
    assert book._db.execute("SELECT count(*) FROM test_results").fetchone() == (7,)
    assert book.problems() == {"alice": "bad zip"}


# ---------------------------------------------------------------- merge

def cuda_run(outcomes: dict[str, str], suite: str = SUITE) -> Results:
    """What a CUDA runner's ``-m cuda`` grading reports: the cuda tests run, the rest not."""
    results = small(suite=suite)
    for ex in results["exercises"]:
        for t in ex["tests"]:
            t["outcome"] = outcomes.get(f"{ex['id']}::{t['name']}", NOT_RUN)
            t["message"], t["counterexample"] = "", None
    results = rescore(results)
    results["environment"] = {"python": "3.11.7", "torch": "2.13.0+cu126",
                              "cuda_available": True, "host": "gpu-node-3",
                              "isolation": {"mode": "process"}}
    return results


def test_merge_replaces_not_run_and_rescores(book):
    sub = book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    before = book.current()["alice"]
    assert (before["score"], before["max_score"], before["pending_points"]) == (9.5, 16.0, 4.0)
    report = book.merge("alice", cuda_run({"tensors/one_hot::test_on_gpu": PASSED,
                                           "cuda/pinned::test_overlap": PASSED,
                                           "cuda/pinned::test_pinned": FAILED}))
    assert (report.submission, report.replaced, report.conflicts, report.unknown) == (sub, 3, [], [])
    assert report.unchanged == 4  # the runner's not_run rows replace nothing
    after = book.current()["alice"]
    expected = small({"tensors/one_hot::test_on_gpu": PASSED, "cuda/pinned::test_overlap": PASSED,
                      "cuda/pinned::test_pinned": FAILED})
    # scores exactly as results.build computes them for the merged outcomes
    for got, want in zip(after["exercises"], expected["exercises"]):
        assert (got["id"], got["score"], got["max_score"], got["status"]) == \
            (want["id"], want["score"], want["max_score"], want["status"])
        assert [t["outcome"] for t in got["tests"]] == [t["outcome"] for t in want["tests"]]
    assert (after["score"], after["max_score"], after["pending_points"]) == \
        (expected["score"], expected["max_score"], expected["pending_points"]) == (12.3333, 20.0, 0.0)
    # the stored row, its test rows and the history agree with the new results
    row = book.submission_rows()[0]
    assert (row.id, row.score, row.max_score, row.pending_points) == (sub, 12.3333, 20.0, 0.0)
    tests = {r.test_id: r for r in book.test_rows()}
    # one_hot: 10 points over weights 3 + 1 + 2 now that the gpu test ran
    assert tests["tensors/one_hot::test_on_gpu"].points == 3.3333
    assert tests["tensors/one_hot::test_matches"].points == 5.0
    assert tests["cuda/pinned::test_overlap"].points == 2.0
    assert round(sum(r.points for r in tests.values()), 4) == 12.3333
    assert len(book.history("alice")) == 1  # updated in place
    merged = after["environment"]["merged"]
    assert len(merged) == 1 and merged[0]["tests"] == 3
    assert merged[0]["from"]["host"] == "gpu-node-3" and merged[0]["from"]["cuda_available"] is True
    assert merged[0]["from"]["isolation"] == "process"
    assert time.strptime(merged[0]["at"], "%Y-%m-%dT%H:%M:%S+00:00")
    assert after["environment"]["isolation"] == {"mode": "process"}  # the grading's own, kept


def test_merge_keeps_the_existing_outcome_on_a_conflict(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    report = book.merge("alice", cuda_run({"tensors/one_hot::test_matches": FAILED,  # was passed
                                           "tensors/one_hot::test_dtype": FAILED,   # same: fine
                                           "autograd/linear::test_backward": TIMED_OUT,
                                           "cuda/pinned::test_pinned": PASSED}))
    assert report.conflicts == ["autograd/linear::test_backward", "tensors/one_hot::test_matches"]
    assert report.replaced == 1 and report.unknown == []
    assert report.unchanged == 4  # test_dtype (same outcome) and three not_run
    tests = {r.test_id: r.outcome for r in book.test_rows()}
    assert tests["tensors/one_hot::test_matches"] == PASSED
    assert tests["autograd/linear::test_backward"] == ERROR
    assert tests["cuda/pinned::test_pinned"] == PASSED



def test_merge_reports_unknown_tests_without_adding_them(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    incoming = cuda_run({"cuda/pinned::test_overlap": PASSED})
    pinned = next(ex for ex in incoming["exercises"] if ex["id"] == "cuda/pinned")
    pinned["tests"].append({**pinned["tests"][0], "name": "test_new_property", "outcome": PASSED})
    incoming["exercises"].append({**pinned, "id": "new/exercise"})
    report = book.merge("alice", incoming)
    assert report.replaced == 1
    assert report.unknown == ["cuda/pinned::test_new_property",
                              "new/exercise::test_new_property", "new/exercise::test_overlap",
                              "new/exercise::test_pinned"]
    assert len(book.test_rows()) == 7
    assert [ex["id"] for ex in book.current()["alice"]["exercises"]] == \
        [ex["id"] for ex in small()["exercises"]]


def test_merge_that_replaces_nothing_writes_nothing(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    incoming = cuda_run({"cuda/pinned::test_overlap": PASSED})
    assert book.merge("alice", incoming).replaced == 1
    once = book.current()
    again = book.merge("alice", incoming)  # the same CUDA results merged twice
    assert (again.replaced, again.unchanged, again.conflicts) == (0, 7, [])
    assert book.current() == once


def test_merge_refuses_other_suites_missing_students_and_other_content(book):
    book.record("alice", "h1", small(), wall_s=1, tests_s=1, worker="w")
    before = book.current()
    with pytest.raises(GradebookError, match=r"gradebook.sqlite: cannot merge into 'alice': .*"
                                             r"suite suite-2, the current submission with suite-1"):
        book.merge("alice", cuda_run({"cuda/pinned::test_overlap": PASSED}, suite="suite-2"))
    unknown_suite = cuda_run({"cuda/pinned::test_overlap": PASSED})
    unknown_suite["suite_hash"] = None
    with pytest.raises(GradebookError, match="suites do not mix"):
        book.merge("alice", unknown_suite)
    book.record("carol", "h3", small(suite=None), wall_s=1, tests_s=1, worker="w")
    with pytest.raises(GradebookError, match="suite None, the current submission with None"):
        book.merge("carol", unknown_suite)  # two unknown suites are not known to be the same
    with pytest.raises(GradebookError, match="cannot merge into 'bob': the student has no graded"):
        book.merge("bob", cuda_run({"cuda/pinned::test_overlap": PASSED}))
    with pytest.raises(GradebookError, match="content h2, the current submission is h1"):
        book.merge("alice", cuda_run({"cuda/pinned::test_overlap": PASSED}), content_hash="h2")
    with pytest.raises(GradebookError, match="not a torchdrill results file"):
        book.merge("alice", {"schema": 1})
    assert book.current()["alice"] == before["alice"]
    assert book.merge("alice", cuda_run({"cuda/pinned::test_overlap": PASSED}),
                      content_hash="h1").replaced == 1


def test_fold_merges_in_memory_without_touching_its_inputs():
    """What the coordinator does with a CPU and a GPU answer before recording."""
    cpu = small()
    gpu = cuda_run({"cuda/pinned::test_overlap": PASSED, "cuda/pinned::test_pinned": PASSED,
                    "autograd/linear::test_shapes": FAILED})
    cpu_before, gpu_before = json.dumps(cpu), json.dumps(gpu)
    merged, report = fold(cpu, gpu)
    assert json.dumps(cpu) == cpu_before and json.dumps(gpu) == gpu_before
    assert (report.replaced, report.conflicts, report.submission) == \
        (2, ["autograd/linear::test_shapes"], None)
    assert (merged["score"], merged["max_score"], merged["pending_points"]) == (13.5, 20.0, 0.0)
    assert merged["environment"]["merged"][0]["tests"] == 2
    unchanged, nothing = fold(cpu, cuda_run({}))
    assert nothing.replaced == 0 and unchanged == cpu
    with pytest.raises(ResultsError, match="suite suite-2, the current submission with suite-1"):
        fold(cpu, cuda_run({}, suite="suite-2"))


def test_rescore_is_results_build(book):
    original = small()
    assert rescore(original) == original
    assert rescore(half_finished()) == half_finished()
    changed = small()
    for ex in changed["exercises"]:
        for t in ex["tests"]:
            t["outcome"] = {"test_backward": PASSED, "test_dtype": NOT_ATTEMPTED}.get(t["name"], t["outcome"])
    want = small({"autograd/linear::test_backward": PASSED, "tensors/one_hot::test_dtype": NOT_ATTEMPTED})
    assert without_messages(rescore(changed)) == without_messages(want) | {"graded_at": changed["graded_at"]}
    assert changed["exercises"][0]["score"] == original["exercises"][0]["score"]  # input untouched


# ---------------------------------------------------------------- kill -9

CHILD = textwrap.dedent("""
    import json, os, signal, sys
    from pathlib import Path
    from grader.classroom.gradebook import Gradebook

    path, start, die_before_commit = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    results = json.loads(Path(sys.argv[4]).read_text())
    book = Gradebook.open(path)
    if die_before_commit:  # every statement of the transaction done, then SIGKILL
        def trace(sql):
            if sql.strip().upper() == "COMMIT":
                os.kill(os.getpid(), signal.SIGKILL)
        book._db.set_trace_callback(trace)
    print("ready", flush=True)
    i = start
    while True:
        print("begin", i, flush=True)
        results["submission"] = f"/subs/{i}"
        book.record(f"s{i % 7}", f"h{i}", results, wall_s=float(i), tests_s=1.0, worker="child")
        print(i, flush=True)  # committed: must survive the kill
        i += 1
""")


def check_consistent(path: Path, committed: set[int]) -> int:
    """Every submission whole, one current per student (the latest), no gaps, nothing
    committed lost; returns how many submissions there are."""
    db = raw(path)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    rows = db.execute("SELECT id, student, content_hash, current, score, results_json "
                      "FROM submissions ORDER BY id").fetchall()
    counts = dict(db.execute("SELECT submission, count(*) FROM test_results GROUP BY submission"))
    db.close()
    seen = [int(h[1:]) for _, _, h, _, _, _ in rows]
    assert seen == list(range(len(rows))), "submissions are recorded in order, without gaps"
    assert committed <= set(seen), f"committed submissions lost: {sorted(committed - set(seen))}"
    latest: dict[str, int] = {}
    for sub, student, _, _current, score, text in rows:
        results = json.loads(text)
        assert counts.get(sub) == sum(len(ex["tests"]) for ex in results["exercises"])
        assert score == results["score"]
        latest[student] = sub
    currents = {student: sub for sub, student, _, current, _, _ in rows if current}
    assert currents == latest
    with Gradebook.open(path) as gb:  # and the gradebook opens and reads as usual
        assert {r.student: r.id for r in gb.submission_rows()} == latest
        assert len(gb.current()) == len(latest)
    return len(rows)


def run_child(path: Path, start: int, log: Path, *, die_before_commit: bool = False,
              kill_after: float | None = None) -> tuple[set[int], bool]:
    """Run the recording loop, SIGKILL it after ``kill_after`` seconds (or let it kill
    itself); returns the submissions it reported committed, and whether it died
    inside ``record()`` (it had begun a record and not returned from it)."""
    sample = path.parent / "sample.json"
    if not sample.exists():
        sample.write_text(json.dumps(half_finished()))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with open(log, "w") as out:
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(start),
                                  "1" if die_before_commit else "0", str(sample)],
                                 stdout=out, stderr=subprocess.PIPE, env=env)
        try:
            deadline = time.monotonic() + 20
            while not log.read_text().startswith("ready") and child.poll() is None:
                assert time.monotonic() < deadline, "the recording child did not start"
                time.sleep(0.01)
            if kill_after is not None:
                time.sleep(kill_after)
                child.send_signal(signal.SIGKILL)
            child.wait(timeout=20)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert child.stderr is not None
    stderr = child.stderr.read().decode()
    child.stderr.close()
    assert child.returncode == -signal.SIGKILL, stderr
    lines = log.read_text().splitlines()[1:]
    return {int(line) for line in lines if line.isdigit()}, bool(lines) and lines[-1].startswith("begin")


def test_a_writer_killed_before_commit_leaves_no_trace(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    committed, _ = run_child(path, 0, tmp_path / "log0", kill_after=0.3)
    count = check_consistent(path, committed)
    assert count > 0
    before = Gradebook.open(path)
    current = before.current()
    before.close()
    # the submission's rows, its test rows and the current flags are all written, not committed
    assert run_child(path, count, tmp_path / "log1", die_before_commit=True) == (set(), True)
    assert check_consistent(path, set()) == count
    with Gradebook.open(path) as gb:
        assert gb.current() == current


def test_a_writer_killed_at_random_moments_leaves_whole_submissions(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    count, committed, inside = 0, set(), 0
    for round_ in range(6):
        done, died_in_record = run_child(path, count, tmp_path / f"log{round_}",
                                         kill_after=rng.uniform(0.0, 0.25))
        committed |= done
        inside += died_in_record
        try:
            count = check_consistent(path, committed)
        except AssertionError as exc:
            raise AssertionError(f"round {round_} (seed {seed}): {exc}") from exc
    assert count >= 20, "the writer should have recorded something between kills"
    assert inside, f"no kill landed inside record() (seed {seed})"  # almost all of them do
    assert len({f"s{i % 7}" for i in range(count)}) == 7
