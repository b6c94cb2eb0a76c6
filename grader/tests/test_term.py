"""Running a term: two assignments, submission times before, within and after the
late window, an extension and overrides give the final points a hand calculation
gives, in grades.csv, class.html, the students' reports and Gradescope's results;
an extension is recomputed without regrading, an override survives a regrade,
and an older gradebook migrates keeping every row.

No grading here: the results are made by hand (``results_json.build``) and
recorded as ``grade-all`` records them; the times are read by the intake from the
files a course keeps them in.

The class (week1: t/a and t/b, 10 points each, due 2026-09-14 23:59 New York,
10% per day started, at most 50%, accepted for 3 days; week2: t/c, 20 points, due
2026-09-21 23:59 Paris, nothing after the due date):

======  ======================  =========================  ==================================
ana     a 10, b 10, c 20        19:00 on the 14th          on time: 40
ben     a 10, b 5, c 20         1 d 10 h late: 2 days      b overridden to 8: week1 18 - 20% =
                                                           14.4; week2 20: 34.4
cat     a 10, b 10, c 0         3 d 12 h late: past the    week1 0, week2 0: 0; extended 2 days:
                                window                     1 d 12 h late, 20 - 20% = 16: 16;
                                                           extended to the 18th noon: 20
dan     a 5, b 5, c 20          22nd 08:00: week1 past     week1 0; week2 overridden to 15: 15
                                the window, week2 late
======  ======================  =========================  ==================================
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import zipfile
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from grader import cli
from grader.classroom import gradebook, term_tables
from grader.classroom.gradebook import Gradebook
from grader.classroom.publishing import publish
from grader.core import results_json
from grader.core.layout import ClassLayout
from grader.core.outcomes import FAILED, PASSED
from grader.core.results_json import ExerciseInfo, Results
from grader.core.term_grades import STUDENTS_WORD, TRUSTED, SubmissionTime
from grader.gradescope import results as gradescope_results
from grader.gradescope.facts import COURSE, PAYLOAD
from grader.intake import times
from grader.intake.reader import Entry, discover
from grader.reports import student_report
from grader.tests.grading import REPO
from grader.tests.test_late_policy import COURSE as ASSIGNMENTS

NY = ZoneInfo("America/New_York")
POINTS = {"t/a": 10, "t/b": 10, "t/c": 20}

COURSE_TOML = """
title = "a term"

[[topics]]
name = "t"
  [[topics.drills]]
  name = "a"
  [[topics.drills]]
  name = "b"
  [[topics.drills]]
  name = "c"

""" + ASSIGNMENTS


def make_results(student: str, passed: dict[str, int]) -> Results:
    """Each drill has two properties of weight 1: ``passed[drill]`` of them pass."""
    records = [results_json.TestRecord(drill, f"p{i}", PASSED if i < passed[drill] else FAILED, message="")
               for drill in POINTS for i in range(2)]
    return results_json.build(student, {d: ExerciseInfo(d, p) for d, p in POINTS.items()}, records,
                              suite="suite")


SCORES = {"ana": {"t/a": 2, "t/b": 2, "t/c": 2}, "ben": {"t/a": 2, "t/b": 1, "t/c": 2},
          "cat": {"t/a": 2, "t/b": 2, "t/c": 0}, "dan": {"t/a": 1, "t/b": 1, "t/c": 2}}


def make_course(root: Path) -> Path:
    root.mkdir()
    (root / "course.toml").write_text(COURSE_TOML)
    (root / student_report.TEMPLATES_DIR).mkdir()
    for template in ("student.html.j2", "class.html.j2"):
        (root / student_report.TEMPLATES_DIR / template).write_bytes(
            (REPO / student_report.TEMPLATES_DIR / template).read_bytes())
    return root


def read_times(folder: Path) -> dict[str, SubmissionTime]:
    """The submissions folder's entries' times, as grade-all reads them (a CSV for two;
    ana's own file, asked for with --student-timestamps)."""
    folder.mkdir()
    (folder / "ana").mkdir()
    (folder / "ana" / "timestamp.txt").write_text("2026-09-14 23:00:00 UTC\n")  # nbgrader's form
    with zipfile.ZipFile(folder / "ben.zip", "w") as zf:
        zf.writestr(zipfile.ZipInfo("t/a.py", (2026, 9, 1, 0, 0, 0)), "x = 1\n")
    (folder / "ben.timestamp.txt").write_text("2026-09-16T10:00:00-04:00")
    (folder / "cat").mkdir()
    (folder / "dan").mkdir()
    table_file = folder.parent / "times.csv"
    table_file.write_text("student,time\ncat,2026-09-18 12:00\ndan,2026-09-22T08:00:00-04:00\n")
    reader = times.Reader(folder, NY, times.read_csv(table_file, NY), student_files=True)
    entries = [Entry("ana", folder / "ana", "folder"), Entry("ben", folder / "ben.zip", "zip"),
               Entry("cat", folder / "cat", "folder"), Entry("dan", folder / "dan", "folder")]
    found = {e.student: reader.time_of(e) for e in entries}
    (folder / "ben.timestamp.txt").unlink()
    assert times.Reader(folder, NY).time_of(entries[1]) is None  # the zip's member dates are never read
    assert all(f is not None for f in found.values())
    return {s: f.recorded() for s, f in found.items() if f is not None}


def run_cli(*args: str) -> None:
    assert cli.main(list(args)) == 0


def grades(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["Student"]: row for row in csv.DictReader(f)}


def class_finals(out: Path) -> dict[str, float]:
    page = (out / "class.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="term-total" data-student="([^"]+)">.*?<strong>([\d.]+)</strong></td></tr>',
                      page, flags=re.S)
    return {student: float(final) for student, final in rows}


def student_term(out: Path, student: str) -> dict[str, Any]:
    return json.loads((ClassLayout(out).student(student).results).read_text())["term"]


def finals_everywhere(out: Path) -> dict[str, float]:
    """Each student's final points, checked to agree in grades.csv, class.html, their
    results.json and report, and their Gradescope file."""
    csv_rows, page = grades(out), class_finals(out)
    finals = {}
    for student in SCORES:
        final = student_term(out, student)["final"]
        assert float(csv_rows[student]["Final Points"]) == pytest.approx(final)
        assert page[student] == pytest.approx(final)
        report = (ClassLayout(out).student(student).report).read_text(encoding="utf-8")
        assert f"Your grade: {final:g} points" in report
        gradescope = json.loads((ClassLayout(out).gradescope / f"{student}.json").read_text())
        assert gradescope["score"] == pytest.approx(final)
        finals[student] = final
    return finals


def test_a_term_gives_the_hand_calculated_final_points_everywhere(tmp_path: Path):
    course = make_course(tmp_path / "course")
    found = read_times(tmp_path / "submissions")
    assert (found["ana"].source, found["ana"].trust) == ("ana/timestamp.txt", STUDENTS_WORD)
    assert (found["cat"].source, found["cat"].trust) == ("times.csv, line 2", TRUSTED)
    out = tmp_path / "class"
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        for student, passed in SCORES.items():
            book.record(student, f"{student}-1", make_results(student, passed), wall_s=1, tests_s=1,
                        worker="w", times={"week1": found[student], "week2": found[student]})
        publish(book, out, course, gradescope=gradescope_results.write_gradescope_class, graded=list(SCORES))
    assert finals_everywhere(out) == {"ana": 40, "ben": 35 - 3, "cat": 0, "dan": 0}

    run_cli("override", str(out), "ben", "b", "8", "--reason", "regrade: p1 was wrong", "--by", "prof",
            "--course", str(course))
    run_cli("override", str(out), "dan", "week2", "15", "--reason", "excused: illness", "--by", "prof",
            "--course", str(course))
    assert finals_everywhere(out) == {"ana": 40, "ben": 34.4, "cat": 0, "dan": 15}
    ben = {g["name"]: g for g in student_term(out, "ben")["assignments"]}
    assert (ben["week1"]["raw"], ben["week1"]["penalty"], ben["week1"]["override"], ben["week1"]["final"]) \
        == (15, 3.6, 3, 14.4)
    dan = {g["name"]: g for g in student_term(out, "dan")["assignments"]}
    assert (dan["week2"]["raw"], dan["week2"]["penalty"], dan["week2"]["override"], dan["week2"]["final"]) \
        == (20, 20, 15, 15)
    row = grades(out)["ben"]
    assert (row["t/b"], row["week1 raw"], row["week1 penalty"], row["week1 override"], row["week1 final"],
            row["Raw Points"], row["Late Penalty"], row["Override Points"]) == \
        ("5", "15", "3.6", "3", "14.4", "35", "3.6", "3")
    report = ClassLayout(out).student("ben").report.read_text(encoding="utf-8")
    assert "regrade: p1 was wrong" in report and "override of t/b: 8 points" in report
    assert "excused: illness" in (out / "class.html").read_text(encoding="utf-8")

    with Gradebook.open(ClassLayout(out).gradebook) as book:
        graded_before = [(r.id, r.graded_at) for r in book.submission_rows()]
    run_cli("extend", str(out), "cat", "week1", "--days", "2", "--reason", "doctor's note", "--by", "prof",
            "--course", str(course))
    assert finals_everywhere(out)["cat"] == 16  # 1 day 12 h late after the extension: 20 - 20%
    run_cli("extend", str(out), "cat", "week1", "--until", "2026-09-18T12:00", "--course", str(course))
    assert finals_everywhere(out)["cat"] == 20
    history = student_term(out, "cat")["history"]
    assert [h["final"] for h in history] == [0, 16, 20]
    assert "week1: extension 2 day(s)" in history[1]["why"] and "doctor's note" in history[1]["why"]
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        assert [(r.id, r.graded_at) for r in book.submission_rows()] == graded_before  # nothing regraded
        assert [d["kind"] for d in term_tables.decisions(book.connection)] == \
            ["override", "override", "extension", "extension"]

        # --force regrades dan (a new current submission, now a 10): the override stays
        book.record("dan", "dan-1", make_results("dan", {"t/a": 2, "t/b": 1, "t/c": 2}), wall_s=1,
                    tests_s=1, worker="w", times={"week1": found["dan"], "week2": found["dan"]})
        publish(book, out, course, gradescope=gradescope_results.write_gradescope_class, graded=["dan"])
    assert finals_everywhere(out)["dan"] == 15
    history = student_term(out, "dan")["history"]
    assert history[-1]["why"] == "regraded: 30 → 35 points graded" and history[-1]["final"] == 15
    report = ClassLayout(out).student("dan").report.read_text(encoding="utf-8")
    assert "excused: illness" in report and "regraded: 30 → 35 points graded" in report

    # the reports a decision writes again are in the language the command speaks
    assert '<html lang="en">' in (out / "class.html").read_text(encoding="utf-8")
    run_cli("override", str(out), "ana", "week1", "19", "--reason", "excused", "--course", str(course), "--lang", "zh")
    assert '<html lang="zh-CN">' in (out / "class.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in ClassLayout(out).student("ana").report.read_text(encoding="utf-8")


def test_an_old_gradebook_migrates_and_keeps_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "gradebook.sqlite"
    with monkeypatch.context() as patch:  # the gradebook this code wrote before the term (version 1)
        patch.setattr(gradebook, "MIGRATIONS", gradebook.MIGRATIONS[:1])
        with Gradebook.open(path) as book:
            for student, passed in SCORES.items():
                book.record(student, student, make_results(student, passed), wall_s=1, tests_s=1, worker="w")
            book.record("ana", "ana-2", make_results("ana", SCORES["cat"]), wall_s=1, tests_s=1, worker="w")
            book.record_problem("eve.zip", "a corrupt zip")
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1
        before = {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                  for table in ("students", "submissions", "test_results", "problems")}
    db.close()
    with Gradebook.open(path) as book:
        assert book.history("ana")[0].current is False and len(book.history("ana")) == 2
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == gradebook.current_version() == 3
        for table, rows in before.items():
            assert db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall() == rows, table
        assert db.execute("SELECT count(*) FROM grade_changes").fetchone()[0] == 0
    db.close()


def test_the_gradescope_run_reads_submission_metadata(tmp_path: Path):
    from grader.gradescope.run import METADATA, term_from_metadata

    course = tmp_path / "source" / PAYLOAD / COURSE
    course.parent.mkdir(parents=True)
    make_course(course)
    results = make_results("submission", SCORES["ben"])
    assert term_from_metadata(tmp_path, results) is None  # no metadata: no term
    (tmp_path / METADATA).write_text('{"created_at": "yesterday", "users": null}')
    assert term_from_metadata(tmp_path, results) is None  # odd metadata: graded, no penalty
    # Gradescope's own dates replace the course's: due the 14th 23:59 New York, late until the 16th;
    # this student has until the 15th 23:59 (late until the 17th) and submitted 1 h 1 min after it
    (tmp_path / METADATA).write_text(json.dumps({
        "id": 1, "created_at": "2026-09-16T01:00:00.000000-04:00",
        "assignment": {"due_date": "2026-09-14T23:59:00.000000-04:00",
                       "late_due_date": "2026-09-16T23:59:00.000000-04:00", "title": "week 1"},
        "users": [{"email": "ben@example.com", "id": 7, "name": "Ben",
                   "assignment": {"due_date": "2026-09-15T23:59:00.000000-04:00",
                                  "late_due_date": "2026-09-17T23:59:00.000000-04:00"}}]}))
    term = term_from_metadata(tmp_path, results)
    assert term is not None
    week1 = next(g for g in term["assignments"] if g["name"] == "week1")
    assert week1["extension"]["by"] == "Gradescope" and week1["penalty"] == 1.5  # 1 day started: 10% of 15
    results["term"] = term
    answer = gradescope_results.gradescope(results)
    # every assignment graded here takes Gradescope's dates: week2 too is 1 h 1 min late, and its
    # policy leaves nothing of its 20 points
    assert answer["score"] == term["final"] == 35 - 1.5 - 20
    assert "late penalty" in answer["output"]


def test_timestamp_files_beside_entries_are_not_entries(tmp_path: Path):
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "one.py").write_text("")
    (tmp_path / "ana.timestamp.txt").write_text("2026-09-14T12:00:00Z")
    assert [e.student for e in discover(tmp_path, ["t/one"])] == ["ana"]
    with pytest.raises(times.TimeProblem, match="ana.timestamp.txt: 'soon' is not a date"):
        (tmp_path / "ana.timestamp.txt").write_text("soon")
        times.Reader(tmp_path, NY).time_of(Entry("ana", tmp_path / "ana", "folder"))


def test_grade_all_records_each_entrys_time_and_a_forced_regrade_keeps_the_override(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """grade-all's own path, its grading processes left out: plan reads the times,
    taking an answer records them with the results, publish settles the term."""
    import tomllib

    from rich.console import Console

    from grader.classroom import classgrade, term
    from grader.classroom.jobs import GradingAnswer, GradingJob, Part
    from grader.classroom.runners import Job
    from grader.core import assignments
    from grader.core.isolation import Isolation
    from grader.tests.classroom import make_submission

    drill = "tensors/one_hot"
    week1 = assignments.parse(tmp_path / "course.toml", tomllib.loads(
        ASSIGNMENTS.replace('["t/a", "t/b"]', f'["{drill}"]').replace('["t/c"]', '["t/none"]')))[:1]
    monkeypatch.setattr(term, "assignments_of", lambda course: week1)
    folder = tmp_path / "submissions"
    for student in ("ana", "ben"):
        make_submission(folder / student, "stubs", 0)
    (folder / "ana.timestamp.txt").write_text("2026-09-14T20:00:00-04:00")
    (folder / "ben" / "timestamp.txt").write_text("2026-09-16T10:00:00-04:00")  # 2 days started: 20%
    out = tmp_path / "class"

    def grade_all(force: bool) -> None:
        template = GradingJob(student="", course=str(REPO), files=b"", isolation=Isolation.NONE)
        grading = classgrade.ClassGrading(REPO, out, template, [drill], force, Console(quiet=True))
        grading.use_times(times.Reader(folder, NY, student_files=True).time_of, REPO)
        with Gradebook.open(ClassLayout(out).gradebook) as book:
            jobs = grading.plan(book, discover(folder, [drill]), gpu=False)
            for job in jobs:
                results = results_json.build(job.student, {drill: ExerciseInfo(drill, 10)}, [
                    results_json.TestRecord(drill, "p", PASSED)], suite=grading.suite)
                grading._take(book, job, {Part.ALL: GradingAnswer(results=results, worker="w")})
            publish(book, out, REPO, gradescope=None, graded=grading.tally.graded)
        assert isinstance(jobs[0], Job) and len(jobs) == 2

    grade_all(force=False)
    assert {s: student_term(out, s)["final"] for s in ("ana", "ben")} == {"ana": 10, "ben": 8}
    assert student_term(out, "ben")["assignments"][0]["time_source"] == "ben/timestamp.txt"
    run_cli("override", str(out), "ben", drill, "9", "--reason", "regrade request", "--course", str(REPO))
    assert student_term(out, "ben")["final"] == pytest.approx(9 * 0.8)
    grade_all(force=True)
    assert student_term(out, "ben")["final"] == pytest.approx(9 * 0.8)
    assert float(grades(out)["ben"]["Final Points"]) == pytest.approx(7.2)
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        assert len(book.history("ben")) == 2  # graded twice, the override kept through --force


def test_a_difference_of_nothing_is_zero_never_minus_zero():
    """0.07 points 10% late: 0.007 lost, 0.063 final, and the override (none, or one that
    sets what was graded) comes out as 0.063 - 0.07 + 0.007, a hair under 0: it is
    stored as 0, never -0."""
    import math
    from datetime import datetime, timedelta

    from grader.core.assignments import Assignment, Policy
    from grader.core.term_grades import Override, grade

    due = datetime(2026, 9, 14, 23, 59, tzinfo=NY)
    week = Assignment("w1", "Week 1", ("t/a",), due, NY, policy=Policy("per_day", 10, 50))
    results: Any = {"exercises": [{"id": "t/a", "status": "failed", "score": 0.07}]}
    for overrides in ({}, {"t/a": Override(0.07, "as graded", "prof", "now")}):
        term = grade(results, (week,), times={"w1": ((due + timedelta(hours=1)).isoformat(), "--times")},
                     overrides=overrides)
        numbers = [term[k] for k in ("raw", "penalty", "override", "final")] + \
            [g[k] for g in term["assignments"] for k in ("raw", "penalty", "override", "final", "before_penalty")]
        assert not [x for x in numbers if x == 0 and math.copysign(1, x) < 0], term


def test_grade_alls_summary_line_shows_the_final_grades_with_raw_beside(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]):
    """Graded 40, 35, 20 and 30: ben 1 d 10 h late (week1 15 - 20%: 32), dan past week1's
    window and late for week2 (0): finals 40, 32, 20, 0."""
    from grader.classroom.classgrade import Tally, _summary, settled

    course, out = make_course(tmp_path / "course"), tmp_path / "class"
    late = {"ben": "2026-09-16T10:00:00-04:00", "dan": "2026-09-22T08:00:00-04:00"}
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        for student, passed in SCORES.items():
            when: Any = {a: (late[student], "--times") for a in ("week1", "week2")} if student in late else None
            book.record(student, f"{student}-1", make_results(student, passed), wall_s=1, tests_s=1, worker="w",
                        times=when)
        publish(book, out, course, gradescope=None, graded=list(SCORES))
        _summary(Tally(graded=list(SCORES)), book.current(), {}, out, 1.0)
        assert "class: 4 student(s), median 32.5 of 40" in capsys.readouterr().out  # no term read: raw
        current = settled(book, course)  # what grade-all's summary reads
    assert {s: r["term"]["final"] for s, r in current.items()} == {"ana": 40, "ben": 32, "cat": 20, "dan": 0}
    _summary(Tally(graded=list(SCORES)), current, {}, out, 1.0)
    assert "class: 4 student(s), median final grade 26 of 40 (raw points graded: median 32.5)" in \
        capsys.readouterr().out
