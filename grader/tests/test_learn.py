"""The learner's loop: list, check, watch and hint.

Everything but three ``check`` runs is tested in this process with fakes (no
grading, no waiting); those three grade one drill in a fresh interpreter, as a
learner's terminal would.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from grader.cli import main
from grader.core import hints, results_json, syllabus
from grader.core.results_json import Results
from grader.learner import check, listing, place, watch
from grader.reports import table
from grader.tests.grading import REPO


@pytest.fixture(scope="module")
def the_course() -> syllabus.Course:
    return syllabus.load(REPO)


def _row(drill_id: str, status: str, score: float = 0.0, points: float = 10.0, **extra: Any) -> dict[str, Any]:
    return {"id": drill_id, "title": "", "points": points, "score": score, "max_score": points,
            "status": status, "tests": [], **extra}


def _results(*rows: dict[str, Any], submission: str = "/sub", suite: str = "s1") -> Results:
    """A results document with just the fields the learner's loop reads."""
    return cast(Results, {
        "schema": results_json.SCHEMA_VERSION, "submission": submission, "suite_hash": suite,
        "score": sum(r["score"] for r in rows), "max_score": sum(r["max_score"] for r in rows),
        "pending_points": 0, "exercises": list(rows)})


# ------------------------------------------------------------------ results

def test_a_check_replaces_its_drill_and_keeps_the_others(the_course):
    old = _results(_row("training/gan", "partial", 5, 15), _row("tensors/one_hot", "failed"))
    new = _results(_row("tensors/one_hot", "passed", 10))
    merged = place.merge(old, new, the_course)
    assert [e["id"] for e in merged["exercises"]] == ["tensors/one_hot", "training/gan"]  # course order
    assert merged["exercises"][0]["status"] == "passed"
    assert (merged["score"], merged["max_score"]) == (15, 25)


@pytest.mark.parametrize("other", [{"submission": "/another"}, {"suite": "s2"}])
def test_results_of_another_submission_or_suite_are_dropped(the_course, other):
    old = _results(_row("training/gan", "partial", 5, 15))
    new = _results(_row("tensors/one_hot", "passed", 10), **other)
    assert place.merge(old, new, the_course) == new


def test_next_unfinished_is_the_first_drill_not_done_in_course_order(the_course):
    first, second = the_course.ids[:2]
    status = {first: "passed", second: "partial"}
    assert place.next_unfinished(the_course, status) == second
    everything = {d: "passed" for d in the_course.ids}
    assert place.next_unfinished(the_course, everything) is None
    almost = everything | {"tensors/one_hot": "failed"}
    assert place.next_unfinished(the_course, almost) == "tensors/one_hot"
    # a drill that cannot be done here (its tests all need CUDA) is never "next"
    assert place.next_unfinished(the_course, everything | {first: "not_run"}) is None
    assert place.next_unfinished(the_course, {first: "not_run"}) == second


def test_list_check_and_watch_suggest_the_same_next_drill(the_course, tmp_path):
    """One rule for "next": the same results, the same drill, whichever command says it.
    (list said the first drill not done; check and watch the first after the one checked.)"""
    first, second, fourth = the_course.ids[0], the_course.ids[1], the_course.ids[3]
    rows = {first: _row(first, "partial", 5), second: _row(second, "passed", 10),
            fourth: _row(fourth, "passed", 10)}  # the learner just finished the fourth
    status = {i: r["status"] for i, r in rows.items()}
    listed = listing.progress_lines(the_course, rows)[-1]
    where = place.Place(REPO, the_course, tmp_path, tmp_path / "results.json")
    printed = io.StringIO()
    check.print_next_step(where, cast(Any, rows[fourth]), status, table.make_console(printed, width=200))
    checked = printed.getvalue()
    learner = FakeLearner({fourth: 1})
    learner.status = dict(status) | {fourth: "failed"}
    learner.run(the_course, fourth, [])
    short = first.rsplit("/", 1)[1]
    assert listed == f"next: torchdrill check {short}"
    assert f"next: torchdrill check {short}" in checked
    assert learner.said == [f"{fourth} is done; moving on to {first}"]
    assert learner.checked == [fourth, first]


def test_the_hints_file_is_ignored_by_git():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    path = f"exercises/{hints.HINTS_FILE}"
    proc = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=REPO)
    assert proc.returncode == 0, f"{path} would show as untracked in git status"


# ------------------------------------------------------------------ watch

class FakeLearner:
    """Stands in for check and the results file: each drill passes after N checks."""

    def __init__(self, checks_to_pass: dict[str, int]):
        self.left = dict(checks_to_pass)
        self.status: dict[str, str] = {}
        self.checked: list[str] = []
        self.said: list[str] = []

    def check(self, drill_id: str) -> str:
        self.checked.append(drill_id)
        self.left[drill_id] = self.left.get(drill_id, 99) - 1
        self.status[drill_id] = "passed" if self.left[drill_id] <= 0 else "failed"
        return self.status[drill_id]

    def run(self, course_: syllabus.Course, start: str, saves: list[list[str]]) -> bool:
        return watch.watch_loop(course_, start, ([Path(p) for p in batch] for batch in saves),
                                self.check, lambda: dict(self.status), self.said.append)


def test_watch_rechecks_the_drill_on_every_save(the_course):
    learner = FakeLearner({"tensors/one_hot": 4})
    finished = learner.run(the_course, "tensors/one_hot",
                           [["exercises/tensors/one_hot.py"], ["exercises/helpers.py"]])
    assert finished is False
    assert learner.checked == ["tensors/one_hot"] * 3


def test_watch_moves_on_to_the_next_unfinished_drill(the_course):
    first, second, third = the_course.ids[:3]
    learner = FakeLearner({first: 2})
    learner.status[second] = "passed"  # done before: skipped
    learner.run(the_course, first, [[f"exercises/{first}.py"]])
    assert learner.checked == [first, first, third]
    assert learner.said == [f"{first} is done; moving on to {third}"]


def test_watch_follows_a_save_in_another_drill(the_course):
    learner = FakeLearner({})
    learner.run(the_course, "tensors/contiguity", [["exercises/training/gan.py"]])
    assert learner.checked == ["tensors/contiguity", "training/gan"]
    assert learner.said == ["switching to training/gan"]


def test_watch_stops_when_every_drill_is_done(the_course):
    learner = FakeLearner({d: 1 for d in the_course.ids})
    more_saves = [["exercises/tensors/one_hot.py"]] * 5
    assert learner.run(the_course, "tensors/contiguity", more_saves) is True
    assert learner.checked == the_course.ids  # each checked once, in course order, no save needed
    assert learner.said[-1].startswith("every drill is done")


def test_watch_exits_cleanly_on_ctrl_c(monkeypatch, capsys, tmp_path):
    def interrupted(folder):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(watch, "file_saves", interrupted)
    monkeypatch.setattr(watch, "check", lambda *a, **k: "failed")
    code = main(["watch", "one_hot", "--course", str(REPO), "--out", str(tmp_path)])
    assert code == 0
    assert "stopped watching" in capsys.readouterr().out


# ------------------------------------------------------------------ hint

def test_hints_are_revealed_one_at_a_time(the_course, tmp_path):
    drill = the_course.drill("tensors/one_hot")
    assert hints.shown(tmp_path, drill) == []
    assert hints.reveal_next(tmp_path, drill) == list(drill.hints[:1])
    assert hints.reveal_next(tmp_path, drill) == list(drill.hints[:2])
    for _ in range(5):
        last = hints.reveal_next(tmp_path, drill)
    assert last == list(drill.hints)
    assert json.loads((tmp_path / hints.HINTS_FILE).read_text())["revealed"] == {
        "tensors/one_hot": len(drill.hints)}


def test_an_unreadable_hints_file_counts_as_none(tmp_path):
    (tmp_path / hints.HINTS_FILE).write_text("{not json")
    assert hints.revealed(tmp_path) == {}
    (tmp_path / hints.HINTS_FILE).write_text('{"revealed": {"a/b": "two", "c/d": 1}}')
    assert hints.revealed(tmp_path) == {"c/d": 1}


def test_hint_command_prints_the_new_hint_after_the_old_ones(the_course, tmp_path, capsys):
    drill = the_course.drill("tensors/contiguity")
    args = ["hint", "contiguity", "--course", str(REPO), "--submission", str(tmp_path)]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "hint 1 of 3" in first and drill.hints[0][:30] in first and drill.hints[1][:30] not in first
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "hint 2 of 3" in second and drill.hints[1][:30] in second and "1 more" in second


def test_hint_without_a_name_is_for_the_first_drill_not_done(tmp_path, capsys):
    results = tmp_path / "reports" / "results.json"
    first, second = syllabus.listed_ids(REPO)[:2]
    results_json.write(_results(_row(first, "passed", 10), submission=str(tmp_path)), results)
    assert main(["hint", "--course", str(REPO), "--submission", str(tmp_path),
                 "--results", str(results)]) == 0
    assert f"{second}: hint 1 of 3" in capsys.readouterr().out


# ------------------------------------------------------------------ list

def test_list_shows_every_drill_in_order_with_status_points_and_progress(tmp_path, capsys):
    results = tmp_path / "results.json"
    results_json.write(_results(_row("tensors/contiguity", "passed", 10),
                                  _row("tensors/one_hot", "partial", 7.5, profile=check.QUICK_PROFILE),
                                  _row("training/gan", "error", 0, 15)), results)
    (tmp_path / hints.HINTS_FILE).write_text('{"revealed": {"tensors/one_hot": 2}}')
    assert main(["list", "--course", str(REPO), "--results", str(results),
                 "--submission", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = {line.split("|")[2].strip(): line for line in out.splitlines() if line.count("|") > 5
             and "/" in line.split("|")[2]}
    assert list(lines) == syllabus.listed_ids(REPO)
    assert "done" in lines["tensors/contiguity"] and "10 / 10" in lines["tensors/contiguity"]
    assert "partial *" in lines["tensors/one_hot"] and "2 / 3" in lines["tensors/one_hot"]
    assert "error" in lines["training/gan"]
    assert "not checked" in lines["attention/attention"] and "- / 15" in lines["attention/attention"]
    drills = len(syllabus.listed_ids(REPO))
    assert re.search(rf"progress: 1 of {drills} drills done, 17\.5 / \d+ points \(\d+%\)", out), out
    assert f"next: torchdrill check {syllabus.listed_ids(REPO)[1].split('/')[1]}" in out
    assert "* from `torchdrill check`" in out


def test_list_without_results_says_where_to_start(tmp_path, capsys):
    assert main(["list", "--course", str(REPO), "--results", str(tmp_path / "none.json")]) == 0
    out = capsys.readouterr().out
    assert "next: torchdrill check contiguity" in out and "no results yet" in out


# ------------------------------------------------------------------ check: usage

def test_check_refuses_an_unknown_drill_with_did_you_mean(capsys):
    assert main(["check", "onehot", "--course", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert "unknown drill onehot: did you mean one_hot?" in err
    assert "contiguity" not in err, "not every drill: the one it looks like"


@pytest.mark.parametrize("command, words", [
    ("list", "course order"), ("check", "smallest failing input"), ("watch", "every time a file"),
    ("hint", "one at a time"),
])
def test_every_learner_command_says_what_it_does(capsys, command, words):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert words in " ".join(capsys.readouterr().out.split())


# ------------------------------------------------------------------ check: real runs

BUGGY_ONE_HOT = '''\
import torch


def one_hot(labels, num_classes=-1):
    print("student says hello")
    if num_classes == -1:
        num_classes = int(labels.max()) + 1
    out = torch.zeros(*labels.shape, num_classes)   # float32: the dtype is wrong
    return out.scatter_(-1, labels.unsqueeze(-1), 1)  # int32 labels crash here
'''


def _check(submission: Path, out: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", "check", "one_hot", "--course", str(REPO),
                           "--submission", str(submission), "--out", str(out)],
                          input=stdin, capture_output=True, text=True, timeout=300, cwd=REPO)


def _submission(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / "sub"
    (folder / "tensors").mkdir(parents=True)
    (folder / "tensors" / "one_hot.py").write_text(source)
    return folder


def test_check_explains_each_failure_and_lets_print_through(tmp_path):
    submission = _submission(tmp_path, BUGGY_ONE_HOT)
    proc = _check(submission, tmp_path / "reports")
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert "student says hello" in out  # capture is off
    assert "tensors/one_hot::test_matches_f_one_hot_given_classes  failed" in out
    assert "dtype differs: got torch.float32, expected torch.int64" in out
    assert "expected: shape" in out and "got: shape" in out  # expected vs got
    assert "Traceback (student code only):" in out and f'File "{submission}/tensors/one_hot.py", line 9' in out
    assert "stuck? torchdrill hint one_hot" in out
    row = json.loads((tmp_path / "reports" / "results.json").read_text())["exercises"][0]
    assert (row["id"], row["profile"], row["status"]) == ("tensors/one_hot", check.QUICK_PROFILE, "failed")


def test_check_of_a_finished_drill_exits_0_and_points_to_the_next(tmp_path):
    submission = tmp_path / "sub" / "tensors"
    submission.mkdir(parents=True)
    shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", submission / "one_hot.py")
    proc = _check(submission.parent, tmp_path / "reports")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tensors/one_hot is done" in proc.stdout and "next: torchdrill check" in proc.stdout


def test_breakpoint_opens_pdb_and_quitting_it_stops_the_check(tmp_path):
    submission = _submission(tmp_path, "def one_hot(labels, num_classes=-1):\n"
                                       "    breakpoint()\n    return labels\n")
    proc = _check(submission, tmp_path / "reports", stdin="p labels.dtype\nq\n")
    assert "(Pdb)" in proc.stdout and "torch." in proc.stdout  # pdb ran and printed the dtype
    assert proc.returncode == 130 and "interrupted" in proc.stdout
