"""The class's reports and exports, made from the gradebook alone: each student's
``results.json`` and report, ``class.html``, ``grades.csv`` and, when asked, the
Gradescope files. ``grade-all``, ``merge``, ``extend`` and ``override`` all end
here, so every route gives the same files for the same gradebook.

Gradescope's per-student files are written by the writer the command hands in
(``gradescope_files``): Gradescope's room (``grader.gradescope``) sits beside this
one, so the command line (``grader.cli``) gives it to the class commands.

Where the course runs a term (assignments with due dates, or any override), each
student's term grade is settled first (``grader.classroom.term.settle``) and
travels in their results as ``term``; a student whose term grade changed gets
their report written again.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from grader.classroom import similarity, term
from grader.classroom.gradebook import Gradebook
from grader.core import i18n, results_json, syllabus
from grader.core.files import write_atomically
from grader.core.layout import ClassLayout
from grader.core.results_json import Results
from grader.reports import student_report

# Gradescope's results for every student (results by id, DIR, language, course) -> the
# files written: ``grader.gradescope.results.write_gradescope_class``.
GradescopeWriter = Callable[[Mapping[str, Results], Path, i18n.Lang, Path], list[Path]]


def gradescope_files(args: argparse.Namespace, wanted: bool) -> GradescopeWriter | None:
    """The writer of Gradescope's per-student files where they are ``wanted``: the one
    the command line set on ``args`` (``write_gradescope_class``); None where not."""
    return args.write_gradescope_class if wanted else None


def write_student(out: Path, course: Path, student: str, results: Results,
                  lang: i18n.Lang = i18n.Lang.EN) -> Path:
    """``DIR/students/<ID>/results.json`` and ``index.html`` (in ``lang``), each written atomically."""
    layout = ClassLayout(out).student(student)
    results_json.write(results, layout.results)
    return student_report.write_report(results, layout.root, course, lang)


def publish(book: Gradebook, out: Path, course: Path, gradescope: GradescopeWriter | None,
            found: dict[str, Any] | None = None, reuse: bool = True,
            graded: Iterable[str] = (), lang: i18n.Lang = i18n.Lang.EN) -> dict[str, Path]:
    """The class report and the exports, from the gradebook's current results; with
    ``found`` (``similarity.analyse``'s evidence), its section, similarity.json and
    similarity.csv; without it, the similarity.json an earlier run left (``reuse``),
    with its behaviour evidence made again from the current results. ``gradescope``:
    the writer of Gradescope's per-student files (``gradescope_files``), or None.

    In a term, the students whose term grade changed, and those ``graded`` now
    (their report was written before their grade was settled), get their
    ``results.json`` and report written again with it. The reports are in ``lang``."""
    from grader.reports import class_report, exports, similarity_view

    current = book.current()
    changed = term.settle(book, course, current)
    for student in sorted(changed | set(graded)):
        if "term" in current.get(student, {}):
            write_student(out, course, student, current[student], lang)
    problems = book.problems()
    stored = ClassLayout(out).similarity
    if found is None and reuse and stored.is_file():
        try:
            found = similarity.refresh(json.loads(stored.read_text(encoding="utf-8")), current)
        except (OSError, ValueError):
            found = None
    written = {"class report": class_report.write_class_report(current, problems, out, course,
                                                              similarity=found, lang=lang),
               "grades": exports.write_grades_csv(current, ClassLayout(out).grades_csv,
                                                  course=_course_or_none(course))}
    if found is not None:
        write_atomically(stored, json.dumps(found, sort_keys=True) + "\n")
        written["similarity"] = similarity_view.write_csv(found, out / similarity_view.CSV_NAME)
    if gradescope is not None:
        paths = gradescope(current, out, lang, course)
        if paths:
            written["gradescope"] = paths[0].parent
    return written


def _course_or_none(course: Path) -> syllabus.Course | None:
    """The course (order of the drills, grades.csv's decimals); None if course.toml is unreadable."""
    try:
        return syllabus.load(course)
    except syllabus.CourseError:
        return None
