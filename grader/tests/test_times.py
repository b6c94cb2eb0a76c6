"""Submission times a course can trust (``grader.intake.times``): where each time came
from and how far it is trusted, shown wherever the time is; one entry's bad time is
that entry's problem.

The end-to-end tests run ``torchdrill grade-all`` in this process with its grading
processes replaced by a runner that answers at once (every submission earns one
drill's 10 points), so the intake, the times, the gradebook, the summary, class.html,
grades.csv and the reports are the real ones and a run takes well under a second.

The term: ``week1`` is ``tensors/one_hot`` (10 points), due 2026-09-14 23:59 New
York, 10% per day started, at most 50%, accepted for 3 days.
"""

from __future__ import annotations

import concurrent.futures
import csv
import html
import json
import os
import sqlite3
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from grader import cli
from grader.classroom import classgrade, term
from grader.classroom.gradebook import Gradebook
from grader.classroom.jobs import GradingAnswer
from grader.classroom.runners import Job
from grader.core import assignments, results_json
from grader.core.layout import ClassLayout
from grader.core.outcomes import PASSED
from grader.core.results_json import ExerciseInfo
from grader.core.term_grades import STUDENTS_WORD, TRUSTED
from grader.intake import times
from grader.intake.reader import discover
from grader.tests.classroom import make_submission
from grader.tests.grading import REPO
from grader.tests.test_late_policy import COURSE as ASSIGNMENTS

NY = ZoneInfo("America/New_York")
DRILL = "tensors/one_hot"
ON_TIME = "2026-09-14T20:00:00-04:00"
LATE = "2026-09-16T10:00:00-04:00"  # 1 day 10 hours late: 2 days started, 20%
EARLY = "2026-09-01T00:00:00-04:00"  # what a student would claim


# ------------------------------------------------------------------ the class

class AnsweringRunner:
    """A runner whose every job earns ``DRILL``'s 10 points at once."""

    def __init__(self, workers: int):
        self.suite = results_json.suite_hash(REPO / "tests", None)  # --public-examples

    def submit(self, job: Job) -> concurrent.futures.Future[GradingAnswer]:
        future: concurrent.futures.Future[GradingAnswer] = concurrent.futures.Future()
        results = results_json.build(job.student, {DRILL: ExerciseInfo(DRILL, 10)},
                                     [results_json.TestRecord(DRILL, "p", PASSED)], suite=self.suite)
        future.set_result(GradingAnswer(results=results, worker="w"))
        return future

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return iter(futures)

    def has_gpu_workers(self) -> bool:
        return False

    def close(self) -> None:
        pass


@pytest.fixture
def a_term(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The course's one_hot as ``week1``, graded by ``AnsweringRunner``; returns the
    submissions folder (empty)."""
    week1 = assignments.parse(tmp_path / "course.toml", tomllib.loads(
        ASSIGNMENTS.replace('["t/a", "t/b"]', f'["{DRILL}"]').replace('["t/c"]', '["t/none"]')))[:1]
    monkeypatch.setattr(term, "assignments_of", lambda course: week1)
    monkeypatch.setattr(classgrade, "LocalRunner", AnsweringRunner)
    folder = tmp_path / "submissions"
    folder.mkdir()
    return folder


def grade_all(folder: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``grade-all folder --out folder/../class`` in this process: (exit code, stdout, stderr)."""
    code = cli.main(["grade-all", str(folder), "--out", str(folder.parent / "class"), "--course", str(REPO),
                     "--only", DRILL, "--public-examples", "--isolation", "none", "--allow-degraded",
                     "--no-similarity", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def week1(out: Path, student: str) -> dict[str, Any]:
    """The student's ``week1`` group of their term grade, from their results.json."""
    results = json.loads(ClassLayout(out).student(student).results.read_text(encoding="utf-8"))
    return next(g for g in results["term"]["assignments"] if g["name"] == "week1")


def grades_csv(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["Student"]: row for row in csv.DictReader(f)}


def recorded(out: Path, path: Path | None = None) -> dict[str, tuple[str, str, str]]:
    """Student -> (submitted at, source, trust) as the gradebook keeps week1's time."""
    with sqlite3.connect(path or ClassLayout(out).gradebook) as db:
        rows = db.execute("SELECT student, submitted_at, source, trust FROM submission_times "
                          "WHERE assignment = 'week1'").fetchall()
    db.close()
    return {student: (at, source, trust) for student, at, source, trust in rows}


def zip_folder(folder: Path, target: Path, date: tuple[int, int, int, int, int, int]) -> None:
    """``folder``'s files in the zip ``target``, every member dated ``date``."""
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.writestr(zipfile.ZipInfo(path.relative_to(folder).as_posix(), date), path.read_bytes())


def zipped_submission(folder: Path, student: str, date: tuple[int, int, int, int, int, int],
                      target: Path | None = None) -> Path:
    staging = folder.parent / f"staging-{student}"
    make_submission(staging, "stubs", 0)
    target = target or folder / f"{student}.zip"
    zip_folder(staging, target, date)
    return target


# ------------------------------------------------------------------ the findings

def test_a_backdated_zip_is_never_the_submission_time(a_term: Path, capsys: pytest.CaptureFixture[str]):
    """Any zip tool sets its members' dates: ben's say the 1st, the deadline is the 14th.
    ``--times zip`` is refused, saying why and what to use; without it the zip's dates
    are not read at all (no time: never late, and nothing recorded as ben's time)."""
    zipped_submission(a_term, "ben", (2026, 9, 1, 0, 0, 0))
    code, _out, err = grade_all(a_term, capsys, "--times", "zip")
    assert code == 2
    assert "--times zip" in err and "student's" in err and "--times FILE" in err and "timestamp.txt" in err
    assert not (a_term.parent / "class").exists()  # refused before anything is written

    code, _out, _err = grade_all(a_term, capsys)
    assert code == 0
    out = a_term.parent / "class"
    assert week1(out, "ben")["submitted_at"] is None and week1(out, "ben")["penalty"] == 0
    assert recorded(out) == {}


def test_a_folder_holding_one_zip_reads_the_instructors_file_beside_the_folder(
        a_term: Path, capsys: pytest.CaptureFixture[str]):
    """An upload form keeps each zip in a folder of the student's: alice/alice.zip.
    The instructor's alice.timestamp.txt beside alice/ is her time; mallory's own
    mallory/mallory.timestamp.txt (and mallory/timestamp.txt) inside her folder is
    never taken for the instructor's."""
    for student in ("alice", "mallory"):
        (a_term / student).mkdir()
        zipped_submission(a_term, student, (2026, 9, 1, 0, 0, 0), a_term / student / f"{student}.zip")
    (a_term / "alice.timestamp.txt").write_text(LATE)
    (a_term / "alice" / "alice.timestamp.txt").write_text(EARLY)  # hers, inside her folder
    (a_term / "mallory" / "mallory.timestamp.txt").write_text(EARLY)
    (a_term / "mallory" / "timestamp.txt").write_text(EARLY)
    entries = {e.student: e for e in discover(a_term, [DRILL])}
    assert entries["alice"].kind == "zip" and entries["alice"].source.parent.name == "alice"

    code, _out, _err = grade_all(a_term, capsys)
    assert code == 0
    out = a_term.parent / "class"
    alice = week1(out, "alice")
    assert alice["submitted_at"] == LATE
    assert (alice["time_source"], alice["time_trust"]) == ("alice.timestamp.txt", TRUSTED)
    assert alice["penalty"] == 2  # 20% of 10
    assert week1(out, "mallory")["submitted_at"] is None  # no instructor's time: never late
    assert set(recorded(out)) == {"alice"}

    reader = times.Reader(a_term, NY, student_files=True)  # even asked for the student's own file,
    found = reader.time_of(entries["mallory"])  # mallory's is mallory/timestamp.txt, marked as hers
    assert found is not None and (found.source, found.trust) == ("mallory/timestamp.txt", STUDENTS_WORD)


def test_the_students_own_timestamp_is_read_only_when_asked_marked_as_theirs_and_loses(
        a_term: Path, capsys: pytest.CaptureFixture[str]):
    """ana/timestamp.txt (where nbgrader's collect leaves it) is the student's side:
    not read by default; with --student-timestamps it is her time, marked as the
    student's word in the gradebook, grades.csv, class.html and her report; ben's
    own file loses to the instructor's ben.timestamp.txt beside his folder."""
    for student in ("ana", "ben"):
        make_submission(a_term / student, "stubs", 0)
    (a_term / "ana" / "timestamp.txt").write_text(LATE)
    (a_term / "ben" / "timestamp.txt").write_text(EARLY)
    (a_term / "ben.timestamp.txt").write_text(LATE)
    out = a_term.parent / "class"

    code, _out, _err = grade_all(a_term, capsys)
    assert code == 0
    assert week1(out, "ana")["submitted_at"] is None
    assert recorded(out) == {"ben": (LATE, "ben.timestamp.txt", TRUSTED)}

    code, _out, _err = grade_all(a_term, capsys, "--student-timestamps", "--force")
    assert code == 0
    assert recorded(out) == {"ana": (LATE, "ana/timestamp.txt", STUDENTS_WORD),
                             "ben": (LATE, "ben.timestamp.txt", TRUSTED)}
    ana = week1(out, "ana")
    assert (ana["time_source"], ana["time_trust"], ana["penalty"]) == ("ana/timestamp.txt", STUDENTS_WORD, 2)
    rows = grades_csv(out)
    assert rows["ana"]["week1 submitted"] == LATE
    assert rows["ana"]["week1 time source"] == "ana/timestamp.txt (the student's word)"
    assert rows["ben"]["week1 time source"] == "ben.timestamp.txt (trusted)"
    page = html.unescape((out / "class.html").read_text(encoding="utf-8"))
    assert 'students-word">ana/timestamp.txt (the student\'s word)' in page
    assert 'time-source">ben.timestamp.txt (trusted)' in page
    report = html.unescape(ClassLayout(out).student("ana").report.read_text(encoding="utf-8"))
    assert 'students-word">ana/timestamp.txt (the student\'s word)' in report


def test_a_bad_time_is_that_students_problem_and_the_class_is_graded(
        a_term: Path, capsys: pytest.CaptureFixture[str]):
    """ana's file says "whenever, lol"; cat's zip has a member dated month 15; dan's
    row of the instructor's CSV is in the year 9999; eve's file is 2 MB. Each is
    reported for that student (the summary, class.html's problems), each is graded
    as never late, everyone else is graded with their time, and a rerun does the
    same instead of failing; a fixed file is read on the next run."""
    for student in ("ana", "ben", "dan", "eve"):
        make_submission(a_term / student, "stubs", 0)
    zipped_submission(a_term, "cat", (2026, 15, 1, 0, 0, 0))
    (a_term / "ana.timestamp.txt").write_text("whenever, lol")
    (a_term / "ben.timestamp.txt").write_text(LATE)
    (a_term / "cat.timestamp.txt").write_text(ON_TIME)
    (a_term / "eve.timestamp.txt").write_text(ON_TIME + " " * 2_000_000)
    table = a_term.parent / "times.csv"
    table.write_text("student,time\ndan,9999-12-31T23:59:59-12:00\n")
    out = a_term.parent / "class"

    for run in range(2):
        code, stdout, err = grade_all(a_term, capsys, "--times", str(table))
        assert code == 0, err
        assert "Traceback" not in err
        lines = stdout.splitlines()
        assert "  ana: ana.timestamp.txt: 'whenever, lol' is not a date and time" in "\n".join(lines)
        assert any(line.startswith("  dan: times.csv, line 2:") and "out of range" in line for line in lines)
        assert any(line.startswith("  eve: eve.timestamp.txt") and "1 KiB" in line for line in lines)
        with Gradebook.open(ClassLayout(out).gradebook) as book:
            assert set(book.current()) == {"ana", "ben", "cat", "dan", "eve"}
            problems = book.problems()
        assert set(problems) == {"ana", "dan", "eve"}, problems
        assert "never late" in problems["ana"] and "whenever, lol" in problems["ana"]
        page = (out / "class.html").read_text(encoding="utf-8")
        assert "whenever, lol" in page and "9999" in page
        assert week1(out, "ana")["submitted_at"] is None and week1(out, "ana")["penalty"] == 0
        assert week1(out, "ben")["penalty"] == 2 and week1(out, "cat")["submitted_at"] == ON_TIME
        if run == 0:
            assert "graded 5 submission(s)" in stdout
        else:
            assert "skipped 5 already graded" in stdout

    (a_term / "ana.timestamp.txt").write_text(LATE)  # the instructor fixes it
    code, stdout, _err = grade_all(a_term, capsys, "--times", str(table))
    assert code == 0 and "  ana:" not in stdout
    assert week1(out, "ana")["submitted_at"] == LATE and week1(out, "ana")["penalty"] == 2
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        assert set(book.problems()) == {"dan", "eve"}

    (a_term / "ana.timestamp.txt").write_text("soon")  # broken again: the time recorded stands, and says so
    code, stdout, _err = grade_all(a_term, capsys, "--times", str(table))
    assert code == 0
    assert f"  ana: ana.timestamp.txt: 'soon' is not a date and time (e.g. 2026-09-14T23:59:00-04:00 or " \
           f"2026-09-14 23:59:00 UTC); the time recorded before still counts: {LATE} (ana.timestamp.txt)" in stdout
    assert week1(out, "ana")["penalty"] == 2


# ------------------------------------------------------------------ reading a time

def test_times_are_read_in_order_each_with_its_source_and_trust(tmp_path: Path):
    folder = tmp_path / "submissions"
    for student in ("ana", "ben", "cat"):
        (folder / student).mkdir(parents=True)
        (folder / student / "timestamp.txt").write_text(EARLY)
    (folder / "ben.timestamp.txt").write_text("2026-09-14 23:00:00.123456 UTC\n")  # nbgrader's form
    (folder / "cat.timestamp.txt").write_text(LATE)
    table_file = tmp_path / "times.csv"
    table_file.write_text("\ufeffstudent,time\ncat,2026-09-18 12:00\n")  # a BOM; no offset: the course's clock
    table = times.read_csv(table_file, NY)
    entries = {e.student: e for e in (times.Entry(s, folder / s, "folder") for s in ("ana", "ben", "cat"))}
    reader = times.Reader(folder, NY, table)
    with pytest.raises(times.TimeProblem, match="no time for ana: times.csv and the files beside the entries name "
                                                "none by this id"):
        reader.time_of(entries["ana"])  # where others have a time, none is that entry's problem
    ben = reader.time_of(entries["ben"])
    assert ben is not None and (ben.when.isoformat(), ben.source, ben.trust) == \
        ("2026-09-14T23:00:00.123456+00:00", "ben.timestamp.txt", TRUSTED)
    cat = reader.time_of(entries["cat"])
    assert cat is not None and (cat.when.isoformat(), cat.source, cat.trust) == \
        ("2026-09-18T12:00:00-04:00", "times.csv, line 2", TRUSTED)
    asking = times.Reader(folder, NY, table, student_files=True)
    ana = asking.time_of(entries["ana"])
    assert ana is not None and (ana.source, ana.trust) == ("ana/timestamp.txt", STUDENTS_WORD)
    assert asking.time_of(entries["ben"]) == ben  # the instructor's file beside it wins


@pytest.mark.parametrize("text, problem", [
    ("whenever, lol", "is not a date and time"),
    ("2026-02-30T10:00:00", "is not a date and time"),
    ("2026-15-01T10:00:00", "is not a date and time"),
    ("9999-12-31T23:59:59-12:00", "out of range"),
    ("0001-01-01T00:00:00+05:00", "out of range"),
    ("1969-12-31T23:59:59Z", "out of range"),
    ("", "'' is not a date and time"),
])
def test_a_time_that_cannot_be_read_is_the_entrys_problem(tmp_path: Path, text: str, problem: str):
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana.timestamp.txt").write_text(text)
    with pytest.raises(times.TimeProblem, match=f"ana.timestamp.txt: .*{problem}"):
        times.Reader(tmp_path, NY).time_of(times.Entry("ana", tmp_path / "ana", "folder"))


def test_a_bad_row_of_the_instructors_csv_is_that_students_problem(tmp_path: Path):
    path = tmp_path / "times.csv"
    path.write_text("student,time\nana,soon\nben\nben,2026-09-14T12:00Z\ncat,2026-09-14T12:00Z\n"
                    "cat,2026-09-15T12:00Z\n,2026-09-14T12:00Z\ndan,2026-09-14T12:00Z\n"
                    "dan,2026-09-14T08:00-04:00\n")
    table = times.read_csv(path, NY)
    reader = times.Reader(tmp_path, NY, table)

    def problem(student: str) -> str:
        with pytest.raises(times.TimeProblem) as err:
            reader.time_of(times.Entry(student, tmp_path / student, "folder"))
        return str(err.value)

    assert problem("ana") == "times.csv, line 2: 'soon' is not a date and time " \
                             "(e.g. 2026-09-14T23:59:00-04:00 or 2026-09-14 23:59:00 UTC)"
    assert problem("ben") == "times.csv, line 3: expected student,time"
    assert "lines 5 and 6 give cat two different times" in problem("cat")
    found = reader.time_of(times.Entry("dan", tmp_path / "dan", "folder"))  # the same time twice: fine
    assert found is not None and found.source == "times.csv, line 8"
    assert table.warnings == ["times.csv, line 7: no student named"]
    assert reader.unused({"ana", "ben", "cat"}) == ["times.csv names dan, who has no entry"]


@pytest.mark.parametrize("content", [b"\xff\xfe2\x000\x00", b"2026-09-14T12:00:00\xe9", b"\x00" * 10])
def test_a_timestamp_file_in_an_odd_encoding_is_a_problem(tmp_path: Path, content: bytes):
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana.timestamp.txt").write_bytes(content)
    with pytest.raises(times.TimeProblem, match="ana.timestamp.txt"):
        times.Reader(tmp_path, NY).time_of(times.Entry("ana", tmp_path / "ana", "folder"))


def test_a_timestamp_that_is_no_regular_file_is_never_opened(tmp_path: Path):
    """A link, a folder or a FIFO where a timestamp file would be: a problem (a FIFO
    would block a reader forever), beside the entry or, asked for, inside it."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(EARLY)
    folder = tmp_path / "submissions"
    for student in ("ana", "ben", "cat", "dan"):
        (folder / student).mkdir(parents=True)
    (folder / "ana.timestamp.txt").symlink_to(elsewhere)
    (folder / "ben.timestamp.txt").mkdir()
    os.mkfifo(folder / "cat.timestamp.txt")
    (folder / "dan" / "timestamp.txt").symlink_to(elsewhere)
    reader = times.Reader(folder, NY, student_files=True)
    for student, what in (("ana", "symbolic link"), ("ben", "not a regular file"),
                          ("cat", "not a regular file"), ("dan", "symbolic link")):
        with pytest.raises(times.TimeProblem, match=what):
            reader.time_of(times.Entry(student, folder / student, "folder"))


def test_timestamp_files_beside_are_matched_by_the_composed_id_and_exactly(tmp_path: Path):
    """José's file written decomposed (as a Mac writes names) is his; Ana.timestamp.txt
    is not ana's (ids are case-sensitive): it names no entry, and says so; and ana, who has
    no time where others have one, is a problem that suggests it. Where no time is given
    at all, none is no problem."""
    (tmp_path / "José").mkdir()
    (tmp_path / "ana").mkdir()
    (tmp_path / "Jose\u0301.timestamp.txt").write_text(LATE)
    (tmp_path / "Ana.timestamp.txt").write_text(LATE)
    reader = times.Reader(tmp_path, NY)
    found = reader.time_of(times.Entry("José", tmp_path / "José", "folder"))
    assert found is not None and found.when.isoformat() == LATE
    with pytest.raises(times.TimeProblem, match=r"no time for ana: .* \(did you mean 'Ana'\?\)"):
        reader.time_of(times.Entry("ana", tmp_path / "ana", "folder"))  # not graded as never late, silently
    assert reader.unused({"José", "ana"}) == ["Ana.timestamp.txt names no entry"]
    assert times.Reader(tmp_path / "José", NY).time_of(times.Entry("x", tmp_path / "José", "folder")) is None


# ------------------------------------------------------------------ the gradebook

def _results(student: str) -> results_json.Results:
    return results_json.build(student, {DRILL: ExerciseInfo(DRILL, 10)},
                              [results_json.TestRecord(DRILL, "p", PASSED)], suite="s")


def test_a_version_2_gradebook_marks_the_times_read_inside_a_submission_as_the_students_word(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from grader.classroom import gradebook

    path = tmp_path / "gradebook.sqlite"
    sources = {"ana": "zip", "ben": "timestamp.txt", "cat": "cat.timestamp.txt", "dan": "--times"}
    with monkeypatch.context() as patch:  # what version 2 recorded: (when, from) and no trust
        patch.setattr(gradebook, "MIGRATIONS", gradebook.MIGRATIONS[:2])
        with Gradebook.open(path) as book:
            for student, source in sources.items():
                book.record(student, student, _results(student), wall_s=1, tests_s=1, worker="w")
                book.connection.execute(
                    "INSERT INTO submission_times (student, assignment, submitted_at, source, submission, "
                    "recorded_at) VALUES (?, 'week1', ?, ?, NULL, 'then')", (student, LATE, source))
                book.connection.commit()
    with Gradebook.open(path) as book:
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA user_version").fetchone()[0] == 3
        db.close()
    assert {s: (source, trust) for s, (_at, source, trust) in recorded(tmp_path / "x", path).items()} == {
        "ana": ("zip", STUDENTS_WORD), "ben": ("timestamp.txt", STUDENTS_WORD),
        "cat": ("cat.timestamp.txt", TRUSTED), "dan": ("--times", TRUSTED)}


def test_a_trusted_time_replaces_the_students_word_even_for_a_skipped_submission(tmp_path: Path):
    """A skipped (unchanged) submission keeps the time recorded when it was graded,
    but for the student's word, which the instructor's file replaces."""
    from grader.core.term_grades import SubmissionTime

    path = tmp_path / "gradebook.sqlite"
    with Gradebook.open(path) as book:
        book.record("ana", "a", _results("ana"), wall_s=1, tests_s=1, worker="w",
                    times={"week1": SubmissionTime(EARLY, "ana/timestamp.txt", STUDENTS_WORD)})
        book.record("ben", "b", _results("ben"), wall_s=1, tests_s=1, worker="w",
                    times={"week1": SubmissionTime(ON_TIME, "ben.timestamp.txt", TRUSTED)})
        book.record_times("ana", {"week1": SubmissionTime(LATE, "ana.timestamp.txt", TRUSTED)}, replace=False)
        book.record_times("ben", {"week1": SubmissionTime(LATE, "times.csv, line 2", TRUSTED)}, replace=False)
        book.record_times("ben", {"week1": SubmissionTime(EARLY, "ben/timestamp.txt", STUDENTS_WORD)},
                          replace=False)
    assert recorded(tmp_path / "x", path) == {"ana": (LATE, "ana.timestamp.txt", TRUSTED),
                                              "ben": (ON_TIME, "ben.timestamp.txt", TRUSTED)}


def test_gradescopes_metadata_is_a_trusted_time_and_its_output_says_where_it_came_from(tmp_path: Path):
    from grader.gradescope.facts import COURSE, PAYLOAD
    from grader.gradescope.results import gradescope
    from grader.gradescope.run import METADATA, term_from_metadata
    from grader.tests.test_term import SCORES, make_course, make_results

    (tmp_path / "source" / PAYLOAD).mkdir(parents=True)
    make_course(tmp_path / "source" / PAYLOAD / COURSE)
    (tmp_path / METADATA).write_text(json.dumps({"created_at": "2026-09-16T01:00:00.000000-04:00"}))
    results = make_results("submission", SCORES["ben"])
    term_grade = term_from_metadata(tmp_path, results)
    assert term_grade is not None
    week = next(g for g in term_grade["assignments"] if g["name"] == "week1")
    assert (week["time_source"], week["time_trust"]) == (METADATA, TRUSTED)
    results["term"] = term_grade
    assert f"submitted 2026-09-16T01:00:00-04:00, {METADATA} (trusted)" in gradescope(results)["output"]


def test_times_given_for_a_run_with_no_assignment_say_they_are_not_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(classgrade, "LocalRunner", AnsweringRunner)
    folder = tmp_path / "submissions"
    make_submission(folder / "ana", "stubs", 0)
    (folder / "ana.timestamp.txt").write_text("[bold]whenever")
    code, _out, err = grade_all(folder, capsys, "--student-timestamps")
    assert code == 0
    assert "not recorded: no [[assignments]] of course.toml has a drill this run grades" in err
