"""Machine-readable exports of ``results.json``: JUnit XML and, for a whole class, a
grades CSV (Gradescope's results are Gradescope's room: ``grader.gradescope.results``).

Both are made from results documents alone (like the HTML report), so they
can be written again later with ``torchdrill report`` (JUnit) or from the
gradebook (the CSV).

JUnit (``--junit FILE``): one ``<testsuite>`` per exercise, one ``<testcase>``
per property. ``failed`` and ``not_attempted`` are failures (both cost points;
``skipped`` would let a stub look green on a CI dashboard), ``error`` and
``timed_out`` are errors, ``not_run`` is skipped with its reason.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from grader.core import i18n
from grader.core.files import write_atomically
from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, TIMED_OUT
from grader.core.results_json import Results
from grader.core.syllabus import GRADE_DECIMALS, Course
from grader.reports import counterexamples, present, term_view

MAX_OUTPUT = 8000  # characters of explanation per Gradescope test / JUnit element


# ------------------------------------------------------------------ JUnit

def junit(results: Results) -> ET.ElementTree:
    """A JUnit XML tree: ``<testsuites>`` of one ``<testsuite>`` per exercise."""
    root = ET.Element("testsuites", name=f"torchdrill: {_xml(results.get('submission', ''))}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for ex in results["exercises"]:
        suite = _junit_suite(ex, results.get("graded_at", ""))
        root.append(suite)
        for key in ("tests", "failures", "errors", "skipped"):
            totals[key] += int(suite.get(key, "0"))
        totals["time"] += float(suite.get("time", "0"))
    for key, value in totals.items():
        root.set(key, f"{value:.3f}" if key == "time" else str(value))
    return ET.ElementTree(root)


def _junit_suite(ex: Mapping[str, Any], timestamp: str) -> ET.Element:
    suite = ET.Element("testsuite", name=ex["id"])
    if timestamp:
        suite.set("timestamp", timestamp)
    props = ET.SubElement(suite, "properties")
    for key in ("title", "points", "score", "max_score", "status"):
        ET.SubElement(props, "property", name=key, value=_xml(str(ex.get(key, ""))))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    elapsed = 0.0
    for t in ex["tests"]:
        case, kind = _junit_case(ex, t)
        suite.append(case)
        if kind:
            counts[kind] += 1
        elapsed += t.get("duration_s", 0.0)
    suite.set("tests", str(len(ex["tests"])))
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{elapsed:.3f}")
    return suite


_JUNIT_KIND = {FAILED: ("failure", "failures"), NOT_ATTEMPTED: ("failure", "failures"),
               ERROR: ("error", "errors"), TIMED_OUT: ("error", "errors"),
               NOT_RUN: ("skipped", "skipped")}


def _junit_case(ex: Mapping[str, Any], t: Mapping[str, Any]) -> tuple[ET.Element, str]:
    """A ``<testcase>`` and which suite counter it adds to ("" when it passed)."""
    case = ET.Element("testcase", classname=ex["id"].replace("/", "."), name=_xml(t["name"]),
                      time=f"{t.get('duration_s', 0.0):.3f}")
    if t["outcome"] not in _JUNIT_KIND:
        return case, ""
    tag, counter = _JUNIT_KIND[t["outcome"]]
    message = present.first_line(present.split_traceback(t.get("message") or "")[0])
    child = ET.SubElement(case, tag, message=_xml(message or present.label(t["outcome"])))
    if tag != "skipped":
        child.set("type", t["outcome"])
        child.text = _xml(truncate(counterexamples.problem_text(t)))
    return case, counter


def write_junit(results: Results, path: Path) -> Path:
    """Write the JUnit XML for ``results`` to ``path``; returns it."""
    tree = junit(results)
    ET.indent(tree)
    root = tree.getroot()
    assert root is not None  # junit() builds the tree from its root
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    write_atomically(path, '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
    return path


# ------------------------------------------------------------------ a class

# Canvas's gradebook import reads these leading columns (the header must start with
# "Student" then "ID" and the last of them must be "Section"); columns after them
# are assignments. "Final Points" is one of the columns Canvas exports as read-only
# and ignores on import, so the total never becomes a stray assignment there.
CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
TOTAL_COLUMN = "Final Points"
POINTS_POSSIBLE = "Points Possible"


def grades_rows(results_by_student: Mapping[str, Results], *, points_possible: bool = False,
                course: Course | None = None) -> list[list[str]]:
    """The rows of ``grades.csv`` (header first); see ``write_grades_csv``."""
    exercises: dict[str, float] = {}
    for results in results_by_student.values():
        for ex in results["exercises"]:
            exercises[ex["id"]] = max(exercises.get(ex["id"], 0.0), ex["points"])
    ids = course.in_order(exercises) if course is not None else sorted(exercises)
    digits = course.grade_decimals if course is not None else GRADE_DECIMALS

    def points(x: float) -> str:
        return present.number(x, digits)

    terms = [t for t in map(term_view.term_of, results_by_student.values()) if t is not None]
    term_columns = term_view.csv_header(terms) if terms else []
    rows = [[*CANVAS_STUDENT_COLUMNS, *ids, *term_columns, TOTAL_COLUMN]]
    if points_possible:
        rows.append([POINTS_POSSIBLE, "", "", "", "", *(points(exercises[e]) for e in ids),
                     *("" for _ in term_columns), points(sum(exercises.values()))])
    for sid in sorted(results_by_student):
        results = results_by_student[sid]
        by_id = {ex["id"]: ex for ex in results["exercises"]}
        scores = ["" if _pending(by_id.get(e)) else points(by_id[e]["score"]) for e in ids]
        term = term_view.term_of(results)
        cells = term_view.csv_cells(term, term_columns)
        total = results["score"] if term is None else term["final"]
        rows.append([sid, sid, sid, sid, "", *scores, *(_cell(cells.get(c), points) for c in term_columns),
                     points(total)])
    return rows


def _cell(value: float | str | None, points: Callable[[float], str]) -> str:
    """A term column's cell: points as the course rounds them, a time or its source as
    it is, nothing as empty."""
    if value is None:
        return ""
    return value if isinstance(value, str) else points(value)


def write_grades_csv(results_by_student: Mapping[str, Results], path: Path, *,
                     points_possible: bool = False, course: Course | None = None) -> Path:
    """Write one row per student (sorted by id): the id, one score per exercise
    (columns named by exercise id, in the order of ``course``, else by id), and the
    total; returns ``path``.

    The layout is Canvas's gradebook import format, which Moodle also reads:

    - Canvas needs the leading columns ``Student, ID, SIS User ID, SIS Login ID,
      Section`` and matches a row to a student by ``ID``, then ``SIS User ID``,
      then ``SIS Login ID``, then the name in ``Student``. The student id (the
      submission's name) is written in all four, so it matches whichever one the
      course uses (and no row has an empty id). The total is ``Final Points``, a column Canvas ignores on import
      (it computes its own); every other column becomes or updates an assignment
      named by exercise id.
    - Moodle's "Import grades from CSV" lets the instructor map any one column to
      username, ID number or email address (map ``SIS Login ID`` to username, say)
      and each score column to a grade item, ignoring the rest.

    Scores are in points, rounded to the course's ``[grades] decimals`` (2 unless
    ``course.toml`` says otherwise), no trailing zeros or float noise (``6.67``, ``10``).
    An exercise pending on this machine (not run here) or absent from a student's
    results is left empty: no grade, not a zero. A stub (not attempted) is ``0``.

    In a term (results with ``term``), the exercise columns stay the graded points;
    each assignment gains ``<name> raw``, ``<name> penalty``, ``<name> override``
    and ``<name> final`` columns, and ``<name> submitted`` (the ISO time) and ``<name>
    time source`` (where it was read and its trust: ``alice.timestamp.txt (trusted)``,
    ``alice/timestamp.txt (the student's word)``), then ``Raw Points``, ``Late Penalty`` and
    ``Override Points``, and ``Final Points`` is the final total
    (``raw - penalty + override``). Canvas makes an assignment of every such
    column it imports: leave out the ones you do not want in its import dialog.

    ``points_possible`` adds Canvas's optional second row ``Points Possible`` (each
    exercise's points), which sets the maximum of assignments the import creates.
    It is off by default: Moodle would take that row for a student it cannot find
    and abort the whole import.

    UTF-8 without a byte-order mark, comma separated, quoted where needed (RFC
    4180); written atomically."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(
        grades_rows(results_by_student, points_possible=points_possible, course=course))
    write_atomically(path, buf.getvalue(), newline="")
    return path


def _pending(ex: Mapping[str, Any] | None) -> bool:
    """No grade yet: the exercise is not in the results, or was not run here."""
    return ex is None or ex["status"] == NOT_RUN


# ------------------------------------------------------------------ helpers

def _xml(text: str) -> str:
    """Text XML 1.0 can carry (submission output may hold any control character)."""
    return present.printable(text)


def truncate(text: str, limit: int = MAX_OUTPUT, t: i18n.Translator | None = None) -> str:
    """At most ``limit`` characters, a cut one ending in "... (truncated)" (in ``t``'s language)."""
    return text if len(text) <= limit else text[: limit - 20] + "\n" + present.words(t).gettext("... (truncated)")
