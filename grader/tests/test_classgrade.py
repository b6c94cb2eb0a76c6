"""``torchdrill grade-all`` and ``merge`` end to end, on synthetic classes
(``classroom.py``) graded with three cheap drills and the quick profile.

One 12-submission class is graded once per test session (``grader.tests.shared``);
the tests read what it wrote. The kill-and-rerun test grades a 6-submission class
whose students are the first 6 of the big one (same content), so a clean run's
results are known.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from grader.classroom import gradeproc
from grader.classroom.gradebook import Gradebook
from grader.core import course_secret, results_json
from grader.core.results_json import Results
from grader.sandbox import confine
from grader.tests import warm
from grader.tests.classroom import CLASS_SECRET, make_class, with_secret
from grader.tests.grading import REPO, exercise, grade_process, outcomes_only
from grader.tests.shared import shared

ONLY = ["tensors/one_hot", "tensors/contiguity", "tensors/padding"]
QUICK = ["--only", *ONLY, "--profile", "torchdrill-quick"]
CLASS_SIZE = 12
NOT_SUBMISSIONS = {"junk": "not a readable zip", "empty": "is empty", "nested": "under a/b/"}



def grade_all(*args: str, timeout: float = 600, env: dict[str, str] | None = None,
              secret: bool = True) -> subprocess.CompletedProcess[str]:
    """``grade-all ARGS``, with the class's course secret unless ``secret`` is False."""
    return warm.run(["-m", "grader", "grade-all", *args, "--course", str(REPO)], REPO, timeout,
                    env=with_secret(env) if secret else env)


def merge(*args: str) -> subprocess.CompletedProcess[str]:
    return warm.run(["-m", "grader", "merge", *args, "--course", str(REPO)], REPO, 120)


def add_non_submissions(folder: Path) -> None:
    (folder / "junk.zip").write_bytes(b"this is not a zip")
    (folder / "empty").mkdir()
    shutil.copytree(REPO / "reference" / "tensors", folder / "nested" / "a" / "b" / "tensors")


@pytest.fixture
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def make(root: Path) -> dict[str, Any]:
        kinds = make_class(root / "submissions", CLASS_SIZE, only=ONLY)
        add_non_submissions(root / "submissions")
        proc = grade_all(str(root / "submissions"), "--out", str(root / "out"), "--workers", "2", *QUICK)
        return {"root": str(root), "kinds": kinds, "returncode": proc.returncode,
                "stdout": proc.stdout, "stderr": proc.stderr}

    made = shared(tmp_path_factory, "class", make)
    root = Path(made["root"])
    return {**made, "root": root, "out": root / "out",
            "proc": subprocess.CompletedProcess([], made["returncode"], made["stdout"], made["stderr"])}


def current(out: Path) -> dict[str, Results]:
    with Gradebook.open(out / "gradebook.sqlite") as book:
        return book.current()


def test_a_mixed_class_gets_a_gradebook_reports_a_class_report_and_a_csv(graded_class):
    proc, out, kinds = graded_class["proc"], graded_class["out"], graded_class["kinds"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"graded {CLASS_SIZE} submission(s)" in proc.stdout
    graded = current(out)
    assert sorted(graded) == sorted(kinds)
    for student, kind in kinds.items():
        results = graded[student]
        assert results["submission"] == student
        assert results["environment"]["isolation"]["mode"] == "sandbox"
        assert [e["id"] for e in results["exercises"]] == sorted(ONLY)
        if kind == "reference":
            assert results["score"] == results["max_score"] == 30
        elif kind == "stubs":
            assert results["score"] == 0
            assert {e["status"] for e in results["exercises"]} == {"not_attempted"}
        elif kind == "half":
            assert 0 < results["score"] < 30
        else:
            assert results["score"] < 30, f"{student}: a mutant kept every point"
        on_disk = json.loads((out / "students" / student / "results.json").read_text())
        assert outcomes_only(on_disk) == outcomes_only(results)
        assert (out / "students" / student / "index.html").read_text().rstrip().endswith("</html>")
    page = (out / "class.html").read_text()
    assert all(f"students/{student}/index.html" in page for student in kinds)
    rows = (out / "grades.csv").read_text().splitlines()
    assert len(rows) == 1 + CLASS_SIZE and rows[0].startswith("Student,ID,")


def test_entries_that_are_not_submissions_are_reported_and_the_rest_graded(graded_class):
    proc, out = graded_class["proc"], graded_class["out"]
    with Gradebook.open(out / "gradebook.sqlite") as book:
        problems = book.problems()
    assert set(problems) == set(NOT_SUBMISSIONS)
    for entry, reason in NOT_SUBMISSIONS.items():
        assert reason in problems[entry]
        assert f"{entry}: " in proc.stdout
    assert f"{len(NOT_SUBMISSIONS)} not a submission" in proc.stdout
    assert "nested" in (out / "class.html").read_text()


def test_a_rerun_skips_what_is_graded_and_writes_nothing_twice(graded_class):
    out = graded_class["out"]
    before = current(out)
    proc = grade_all(str(graded_class["root"] / "submissions"), "--out", str(out), *QUICK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "graded 0 submission(s)" in proc.stdout
    assert f"skipped {CLASS_SIZE} already graded" in proc.stdout
    assert current(out) == before
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == CLASS_SIZE


def _forms(folder: Path, dest: Path) -> dict[str, Path]:
    """The same submission handed in four ways: its folder, a zip of it, a notebook
    whose cells hold its files, and its drill files loose (``one_hot.py``)."""
    import zipfile

    from grader.intake import notebooks

    files = {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*.py"))}
    dest.mkdir()
    zipped = dest / "as.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for rel, text in files.items():
            zf.writestr(f"work/{rel}", text)
    notebook = dest / "as.ipynb"
    notebook.write_text(notebooks.dumps_cells([("markdown", "# my homework")]
                                              + [("code", files[f"{d}.py"]) for d in ONLY]))
    loose = dest / "loose"
    loose.mkdir()
    for drill in ONLY:
        (loose / f"{Path(drill).name}.py").write_text(files[f"{drill}.py"])
    return {"folder": folder, "zip": zipped, "notebook": notebook, "loose files": loose}


def test_grade_scores_every_form_of_a_submission_as_grade_all_does(graded_class, tmp_path):
    """One intake: the same submission graded alone by `grade` as a folder, a zip, a
    notebook and loose drill files, and inside `grade-all`: the same outcome for every
    property, and the same counterexample."""
    student = next(s for s, kind in graded_class["kinds"].items() if kind == "mutant")
    secret_file = tmp_path / "secret"
    secret_file.write_text(CLASS_SECRET)
    in_class = current(graded_class["out"])[student]
    expected = [(e, t["name"], t["outcome"], t["counterexample"]) for e in ONLY for t in exercise(in_class, e)["tests"]]
    assert any(outcome != "passed" for _, _, outcome, _ in expected)  # a mutant: something to agree on
    for form, path in _forms(graded_class["root"] / "submissions" / student, tmp_path / "forms").items():
        out = tmp_path / form.replace(" ", "-")
        # in-process: every isolation mode gives the same verdict (test_same_verdict.py), and the
        # point here is what each form is read as
        proc = grade_process(path, out, "--isolation", "none", *QUICK, "--secret-file", str(secret_file),
                             timeout=300)
        assert proc.returncode == 0, f"{form}: {proc.stderr}"
        alone = json.loads((out / "results.json").read_text())
        assert alone["score"] == in_class["score"], form
        assert [(e, t["name"], t["outcome"], t["counterexample"])
                for e in ONLY for t in exercise(alone, e)["tests"]] == expected, form


def test_merge_folds_a_cuda_runners_results_into_the_gradebook(graded_class, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(graded_class["out"], out)
    student = next(s for s, kind in graded_class["kinds"].items() if kind == "reference")
    mine = json.loads((out / "students" / student / "results.json").read_text())
    not_run = [(e["id"], t["name"]) for e in mine["exercises"] for t in e["tests"]
               if t["outcome"] == "not_run"]
    assert not_run, "the padding drill has a cuda test, not run on this machine"
    assert mine["pending_points"] == 0 and exercise(mine, "tensors/padding")["max_score"] == 10
    from_gpu = json.loads(json.dumps(mine))  # what a CUDA runner's grading would say
    for e in from_gpu["exercises"]:
        for t in e["tests"]:
            t["outcome"] = "passed" if t["outcome"] == "not_run" else "not_run"
    cuda_results = tmp_path / "cuda.json"
    results_json.write(from_gpu, cuda_results)

    proc = merge(str(cuda_results), "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{student}: {len(not_run)} test(s) now have a real outcome" in proc.stdout
    merged = current(out)[student]
    outcomes = {(e["id"], t["name"]): t["outcome"] for e in merged["exercises"] for t in e["tests"]}
    assert all(outcomes[key] == "passed" for key in not_run)
    assert merged["environment"]["merged"], "where the outcomes came from is kept"
    on_disk = json.loads((out / "students" / student / "results.json").read_text())
    assert outcomes_only(on_disk) == outcomes_only(merged)

    again = merge(str(cuda_results), "--out", str(out))
    assert "0 test(s) now have a real outcome" in again.stdout  # idempotent
    from_gpu["suite_hash"] = "0" * 16
    results_json.write(from_gpu, cuda_results)
    refused = merge(str(cuda_results), "--out", str(out))
    assert "skipped" in refused.stdout and "suite" in refused.stdout
    missing = merge(str(cuda_results), "--out", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no gradebook" in missing.stderr


@pytest.mark.parametrize("args, message", [
    (["nowhere", "--out", "x"], "is not a folder"),
    (["grader", "--out", "x", "--workers", "0"], "--workers must be at least 1"),
    (["grader", "--out", "x", "--only", "tensors/nope"], "unknown exercise tensors/nope"),
    (["grader", "--out", "x", "--isolation", "process"],
     "--isolation process grades without 5 of the sandbox's 5 layers"),
    (["grader", "--out", "x", "--sandbox-off", "seccomp"], "seccomp off: forced off (--sandbox-off)"),
])
def test_bad_input_is_refused_with_a_clear_message(args, message, tmp_path):
    args = [str(tmp_path / a) if a in ("nowhere", "x") else a for a in args]
    proc = grade_all(*args, timeout=60)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_a_class_is_graded_only_with_a_secret_or_on_purpose_without(tmp_path):
    """No course secret anywhere: grade-all says how to make one instead of grading with
    examples every student can replay; a bad one is named; ``--public-examples`` is the
    way to grade without one on purpose."""
    home = {k: v for k, v in os.environ.items() if k != "TORCHDRILL_SECRET"} | {
        "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    folder = tmp_path / "submissions"
    make_class(folder, 1, only=["tensors/one_hot"])
    args = (str(folder), "--out", str(tmp_path / "out"), "--only", "tensors/one_hot",
            "--profile", "torchdrill-quick", "--no-similarity")
    refused = grade_all(*args, env=home, secret=False, timeout=60)
    assert refused.returncode == 2 and "no course secret" in refused.stderr
    assert "torchdrill secret" in refused.stderr and str(tmp_path / "config") in refused.stderr
    bad = tmp_path / "bad-secret"
    bad.write_text("short")
    named = grade_all(*args, "--secret-file", str(bad), env=home, secret=False, timeout=60)
    assert named.returncode == 2 and str(bad) in named.stderr and "16 characters" in named.stderr
    # --public-examples: the instructor's explicit choice (graded publicly: test_secret.py)
    assert course_secret.official(None, True, {}) is None
    from grader.classroom.jobs import GradingJob
    from grader.core.isolation import Isolation

    public = GradingJob(student="s", course=str(REPO), files=b"", isolation=Isolation.SANDBOX)
    official = dataclasses.replace(public, secret="s" * 20)
    assert public.request(REPO).secret is None  # the job's grading draws no secret's examples
    drawn = official.request(REPO).secret
    assert drawn is not None and drawn.digest == course_secret.parse("s" * 20, "test").digest


def test_a_grading_process_that_dies_costs_one_submission(tmp_path):
    """--isolation none runs student code in the grading process: one that exits at
    import kills it. That student is reported; the others are graded."""
    folder = tmp_path / "submissions"
    make_class(folder, 2, only=ONLY)  # s000-reference, s001-stubs
    shutil.copytree(REPO / "reference", folder / "crasher")
    (folder / "crasher" / "tensors" / "one_hot.py").write_text("import os\nos._exit(7)\n")
    proc = grade_all(str(folder), "--out", str(tmp_path / "out"), "--workers", "2",
                     "--isolation", "none", "--allow-degraded", *QUICK)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "1 could not be graded" in proc.stdout
    assert "crasher: the grading process died (exit 7)" in proc.stdout
    graded = current(tmp_path / "out")
    assert sorted(graded) == ["s000-reference", "s001-stubs"]
    assert graded["s000-reference"]["score"] == 30


def test_a_grading_process_refuses_a_degraded_sandbox_unless_allowed(tmp_path):
    """The check a cluster's machines make for themselves, before unpacking anything."""
    from grader.classroom.jobs import GradingJob
    from grader.core.isolation import Isolation

    job = GradingJob(student="s", course=str(REPO), files=b"", isolation=Isolation.SANDBOX,
                     sandbox_off=["landlock"])
    answer = gradeproc.serve(GradingJob.from_json(job.to_json()), tmp_path)
    assert answer.error is not None and "landlock off: forced off (--sandbox-off)" in answer.error, answer
    assert "--allow-degraded" in answer.error and not list(tmp_path.iterdir())
    if all(state == "on" for state in confine.plan("sandbox").layers.values()):
        assert confine.refuse_degraded("sandbox") is None  # the twin: a whole sandbox grades


def _graded_count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    except sqlite3.Error:
        return 0


def _gradeprocs(tag: str) -> list[int]:
    """Grading processes started by runs carrying ``tag`` in their environment."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if f"TORCHDRILL_TEST_TAG={tag}".encode() in environ and b"grader.classroom.gradeproc" in cmdline:
            found.append(int(pid))
    return found


def test_kill_9_at_any_moment_then_rerun_loses_and_duplicates_nothing(graded_class, tmp_path):
    n = 4
    folder = tmp_path / "submissions"
    make_class(folder, n, only=ONLY)  # the first 4 students of the big class, same files
    out = tmp_path / "out"
    db = out / "gradebook.sqlite"
    tag = uuid.uuid4().hex
    env = with_secret({**os.environ, "TORCHDRILL_TEST_TAG": tag})
    command = [sys.executable, "-m", "grader", "grade-all", str(folder), "--out", str(out),
               "--workers", "2", "--course", str(REPO), *QUICK]
    # Kill at once (maybe before the gradebook exists), after the first records, and
    # a moment later: each kill lands wherever the run happens to be.
    for wait_for in (0, 1, 2):
        run = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while _graded_count(db) < wait_for and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(run.pid, signal.SIGKILL)  # the coordinator only: its grading processes must follow
        run.wait()
        deadline = time.monotonic() + 30
        while _gradeprocs(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _gradeprocs(tag), "a grading process outlived its killed coordinator"
    recorded_before_rerun = _graded_count(db)
    assert recorded_before_rerun < n, "the kills came too late to test anything"

    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"graded {n - recorded_before_rerun} submission(s)" in proc.stdout
    assert f"skipped {recorded_before_rerun} already graded" in proc.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        counts = conn.execute("SELECT student, COUNT(*) FROM submissions GROUP BY student").fetchall()
    assert len(counts) == n and all(c == 1 for _, c in counts), counts  # none lost, none twice
    clean = current(graded_class["out"])
    for student, results in current(out).items():
        assert outcomes_only(results) == outcomes_only(clean[student])
        json.loads((out / "students" / student / "results.json").read_text())  # whole files
    assert not list(out.rglob(".*"))  # no temporary file of a half-done write


def test_a_dask_cluster_grades_and_sends_cuda_tests_to_gpu_workers(tmp_path):
    """A LocalCluster worker, and a second worker started as the README says for a GPU
    machine (`dask worker ADDRESS --resources GPU=1`). Every cuda task must land on
    the GPU worker. (Here it has no CUDA, so its tests stay 'not run here'.)"""
    from distributed import Client, LocalCluster

    folder = tmp_path / "submissions"
    make_class(folder, 3, only=ONLY)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        gpu = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                cluster.scheduler_address, "--nthreads", "1", "--resources",
                                "GPU=1", "--name", "gpu-worker", "--no-dashboard"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(2, timeout=60)
            pids = client.run(os.getpid)
            workers = client.scheduler_info(n_workers=-1)["workers"]
            gpu_pid = next(pids[a] for a, w in workers.items() if (w.get("resources") or {}).get("GPU"))
            proc = grade_all(str(folder), "--out", str(tmp_path / "out"), "--scheduler",
                             cluster.scheduler_address, *QUICK)
        finally:
            gpu.terminate()
            gpu.wait(timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    graded = current(tmp_path / "out")
    assert sorted(graded) == ["s000-reference", "s001-stubs", "s002-half"]
    assert graded["s000-reference"]["score"] == 30
    for results in graded.values():
        where = results["environment"]["grading"]
        assert int(where["cuda_worker"].split(":")[1]) == gpu_pid
