"""The class report: ``DIR/class.html``, one page about a whole class's results.

Made from plain data, not from the gradebook: ``results_by_student`` maps a
student id to that student's results document (``grader.core.results_json``), and
``problems`` maps an entry that could not be graded to the reason. The lead's
coordinator reads both from the gradebook and calls ``write_class_report``.

Two halves, tested apart:

- ``class_summary`` computes every figure on the page (means, medians, shares,
  failure rates, grouped counterexamples) as plain data.
- ``render_html`` draws the charts (``grader.reports.class_charts``: matplotlib,
  inline SVG) and fills
  ``report_templates/class.html.j2``, with the student report's jinja
  environment (``grader.reports.student_report.environment``: autoescaping always on).

The page is one offline file: inline CSS, inline SVG, and exactly one inline
script (sorting the roster), allowed by its sha256 hash in the page's Content
Security Policy, so no other script (say, one hidden in a student's message)
could run even if an escape were missed. The same data gives the same bytes:
charts use a fixed ``svg.hashsalt``, no dates, text kept as text.
"""

from __future__ import annotations

import base64
import hashlib
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from grader.core import drill_texts, i18n, syllabus
from grader.core.files import write_atomically
from grader.core.layout import REPORT, STUDENTS, ClassLayout
from grader.core.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT
from grader.core.results_json import Results
from grader.reports import counterexamples, present, similarity_view, student_report
from grader.reports.class_charts import charts

CLASS_TEMPLATE = "class.html.j2"
TOP_INPUTS = 3  # most common failing inputs shown per property
SMALL_TENSOR = 8  # tensors with at most this many elements show their values in an input

LOST = (FAILED, ERROR, TIMED_OUT)  # outcomes that cost a property's points on code that ran

# The one script on the page: click a roster header to sort by that column.
# Cells carry their sort key in data-sort; an empty key (pending, not graded)
# stays at the bottom either way; ties keep the id order (data-index).
SORT_SCRIPT = """
(function () {
  "use strict";
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var button = th.querySelector("button");
      if (!button) { return; }
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "number";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-sort");
          var y = b.cells[col].getAttribute("data-sort");
          if (x === "" || y === "") { return (x === "" ? 1 : 0) - (y === "" ? 1 : 0); }
          var d = numeric ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : x > y ? 1 : 0);
          return (ascending ? d : -d) || (Number(a.getAttribute("data-index")) -
                                          Number(b.getAttribute("data-index")));
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
}());
"""


def script_hash(script: str = SORT_SCRIPT) -> str:
    """The CSP source that allows exactly ``script`` inline: ``'sha256-<base64>'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy() -> str:
    """No network, no plugins; inline styles; the sort script and nothing else."""
    return (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            f"script-src {script_hash()}")


def student_href(student_id: str) -> str:
    """``students/<ID>/index.html``, the id URL-quoted (a ``#`` or ``?`` is a name here);
    letters and digits of any script stay as they are (``students/张三/index.html``: an
    HTML link may hold them, and the page reads as the folder is named)."""
    safe = "".join(c if c.isalnum() or c in "._-" else quote(c, safe="") for c in student_id)
    return f"{STUDENTS}/{safe}/{REPORT}"  # each student's own report


# ------------------------------------------------------------------ figures

def class_summary(results_by_student: Mapping[str, Results],
                  problems: dict[str, str], order: Sequence[str] = (),
                  t: i18n.Translator | None = None) -> dict[str, Any]:
    """Every figure on the class page, as plain data; exercises in course order
    (``order``: drill ids as ``course.toml`` lists them; others after them, by id).

    - ``exercises``: per exercise, over the students *graded* on it (status not
      ``not_run``): mean and median score, share at full marks, share not
      attempted; students whose exercise was not run here are counted apart
      (``pending``), and students whose results lack it (``missing``) too.
    - ``properties``: per exercise test, the failure rate over the students
      whose code it ran against (the test ran here, the exercise was attempted,
      and the function it calls was not a stub: outcome passed, failed, error or
      timed out), sorted worst first, with the most common failing inputs.
    - ``totals``, ``students`` (the roster), ``errors``, ``problems``, ``suites``.

    In a term (results with ``term``: ``grader.core.term_grades``), each student's
    grade is their final points: the roster's ``score`` and ``totals`` are the finals,
    and the points graded stay beside them (each row's ``raw``, ``totals["raw"]``:
    the same figures of the raw points; None without a term, where the points graded
    are the grade).

    Its few words (a suite not recorded, an error's message) are in ``t``'s language.
    """
    t = t or i18n.translator(i18n.Lang.EN)
    ids = sorted(results_by_student)
    catalogue = _catalogue(results_by_student, ids, order)
    roster = [_roster_row(i, sid, results_by_student[sid], catalogue)
              for i, sid in enumerate(ids)]
    totals = [row["score"] for row in roster]
    in_term = any(results_by_student[sid].get("term") for sid in ids)
    full_points = sum(ex["points"] for ex in catalogue.values())
    suites = Counter(results_by_student[sid].get("suite_hash") or t.gettext("not recorded") for sid in ids)
    stamps = sorted(r["graded_at"] for r in results_by_student.values() if r.get("graded_at"))
    return {
        "student_count": len(ids),
        "students": roster,
        "exercises": [_exercise_stats(ex, roster) for ex in catalogue.values()],
        "properties": _property_stats(results_by_student, ids, list(catalogue)),
        "totals": {
            **_figures(totals),
            "full_points": full_points,
            "with_pending": sum(1 for row in roster if row["pending_points"]),
            "raw": _figures([row["raw"] for row in roster]) if in_term else None,
        },
        "errors": _errors(results_by_student, ids, t),
        "flags": _flags(results_by_student, ids),
        "problems": [{"name": name, "reason": problems[name]} for name in sorted(problems)],
        "suites": [{"hash": h, "students": n} for h, n in sorted(suites.items())],
        "graded_from": stamps[0] if stamps else None,
        "graded_to": stamps[-1] if stamps else None,
        # a term's grades (``grader.core.term_grades``): lateness, overrides, final points
        "term": [{"student": sid, **results_by_student[sid]["term"]} for sid in ids
                 if results_by_student[sid].get("term")],
    }


def _figures(scores: list[float]) -> dict[str, Any]:
    """The scores, their mean, median, least and most (None for no score)."""
    return {"scores": scores,
            "mean": statistics.fmean(scores) if scores else None,
            "median": statistics.median(scores) if scores else None,
            "min": min(scores, default=None),
            "max": max(scores, default=None)}


def course_position(order: Sequence[str]) -> Callable[[str], tuple[int, str]]:
    """A sort key: a drill's place in ``order`` (course order), then its id."""
    where = {eid: k for k, eid in enumerate(order)}
    return lambda eid: (where.get(eid, len(where)), eid)


def course_order(course: Path) -> list[str]:
    """The drill ids of the course at ``course`` in ``course.toml``'s order (none when
    it cannot be read: then every list is in id order)."""
    try:
        return syllabus.load(course).ids
    except syllabus.CourseError:
        return []


def _catalogue(results_by_student: Mapping[str, Results], ids: list[str], order: Sequence[str] = ()
               ) -> dict[str, dict[str, Any]]:
    """Every exercise any student has, by id: title and points (the largest seen)."""
    found: dict[str, dict[str, Any]] = {}
    for sid in ids:
        for ex in results_by_student[sid]["exercises"]:
            entry = found.setdefault(ex["id"], {"id": ex["id"], "title": ex.get("title") or "",
                                                "points": ex["points"]})
            entry["points"] = max(entry["points"], ex["points"])
            entry["title"] = entry["title"] or ex.get("title") or ""
    # a short column label for the roster: the id's last part, unless two share it
    shorts = Counter(eid.rsplit("/", 1)[-1] for eid in found)
    for eid, entry in found.items():
        short = eid.rsplit("/", 1)[-1]
        entry["label"] = short if shorts[short] == 1 else eid
    return {eid: found[eid] for eid in sorted(found, key=course_position(order))}


def _roster_row(index: int, sid: str, results: Results,
                catalogue: dict[str, dict[str, Any]]) -> dict[str, Any]:
    by_id = {ex["id"]: ex for ex in results["exercises"]}
    cells = {}
    for eid in catalogue:
        ex = by_id.get(eid)
        cells[eid] = None if ex is None else {
            "score": ex["score"], "max_score": ex["max_score"], "status": ex["status"]}
    term = results.get("term")
    return {
        "index": index,
        "id": sid,
        "href": student_href(sid),
        "score": results["score"] if not term else term["final"],  # a term's final points are the grade
        "raw": results["score"],  # the points graded
        "max_score": results["max_score"],
        "pending_points": results.get("pending_points") or 0,
        "cells": cells,
    }


def _exercise_stats(ex: dict[str, Any], roster: list[dict[str, Any]]) -> dict[str, Any]:
    cells = [row["cells"][ex["id"]] for row in roster]
    present_cells = [c for c in cells if c is not None]
    graded = [c for c in present_cells if c["status"] != NOT_RUN]
    scores = sorted(c["score"] for c in graded)
    attempted = sorted(c["score"] for c in graded if c["status"] != NOT_ATTEMPTED)
    full = sum(1 for c in graded if c["max_score"] > 0 and c["score"] >= c["max_score"] - 1e-9)
    stubs = sum(1 for c in graded if c["status"] == NOT_ATTEMPTED)
    n = len(graded)
    return {
        **ex,
        "graded": n,
        "pending": len(present_cells) - n,
        "missing": len(cells) - len(present_cells),
        "scores": scores,
        "attempted_scores": attempted,
        "mean": statistics.fmean(scores) if scores else None,
        "median": statistics.median(scores) if scores else None,
        "full_marks": full,
        "full_marks_share": full / n if n else None,
        "not_attempted": stubs,
        "not_attempted_share": stubs / n if n else None,
        "statuses": dict(sorted(Counter(c["status"] for c in present_cells).items())),
    }


def _property_stats(results_by_student: Mapping[str, Results], ids: list[str],
                    order: Sequence[str] = ()) -> list[dict[str, Any]]:
    props: dict[tuple[str, str], dict[str, Any]] = {}
    for sid in ids:
        for ex in results_by_student[sid]["exercises"]:
            for t in ex["tests"]:
                p = props.setdefault((ex["id"], t["name"]), {
                    "exercise": ex["id"], "test": t["name"],
                    "title": t.get("title") or present.property_title(t["name"]),
                    "hidden": bool(t.get("hidden")),
                    "outcomes": Counter(), "inputs": {}, "without_input": 0})
                p["outcomes"][t["outcome"]] += 1
                if t["outcome"] in LOST:
                    text = input_text(t.get("counterexample"))
                    if text is None:
                        p["without_input"] += 1
                    else:
                        p["inputs"].setdefault(text, []).append(sid)
    rows = []
    for p in props.values():
        outcomes = p.pop("outcomes")
        inputs = p.pop("inputs")
        ran = sum(outcomes[o] for o in (PASSED, *LOST))
        lost = sum(outcomes[o] for o in LOST)
        groups = sorted(inputs.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        rows.append({
            **p,
            "ran": ran,  # the denominator: see class_summary
            "failures": lost,
            "rate": lost / ran if ran else None,
            "passed": outcomes[PASSED],
            "failed": outcomes[FAILED],
            "errors": outcomes[ERROR],
            "timed_out": outcomes[TIMED_OUT],
            "not_attempted": outcomes[NOT_ATTEMPTED],
            "not_run": outcomes[NOT_RUN],
            "distinct_inputs": len(groups),
            "top_inputs": [{"text": text, "count": len(sids), "students": sids}
                           for text, sids in groups[:TOP_INPUTS]],
        })
    place = course_position(order)
    rows.sort(key=lambda r: (r["rate"] is None, -(r["rate"] or 0.0), -r["failures"],
                             place(r["exercise"]), r["test"]))
    return rows


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def input_text(counterexample: dict[str, Any] | None) -> str | None:
    """A failing input as one line of text, equal for equal inputs (to group them).

    Each call as ``counterexamples.call_text`` writes it (``one_hot(<int64 tensor of shape
    (2,)>, 3)``), followed by what that text leaves out and a failure may hinge on:
    the values of small tensors, and the strides of non-contiguous ones. Without
    recorded calls, hypothesis' own text (object addresses removed); None when the
    test recorded no input at all."""
    cx = counterexample or {}
    calls = cx.get("calls") or []
    if calls:
        return "; ".join(_call_line(call) for call in calls)
    example = (cx.get("example") or "").strip()
    return _ADDRESS.sub("", " ".join(example.split())) or None


def _call_line(call: dict[str, Any]) -> str:
    notes = []
    for name, t in counterexamples.call_tensors(call, i18n.translator(i18n.Lang.EN)):  # a key: one language
        shape = t.get("shape") or []
        size = 1
        for d in shape:
            size *= d
        if size and size <= SMALL_TENSOR and not t.get("elided") \
                and not isinstance(t.get("values"), str):  # a repr (complex, sparse): shown as is
            notes.append(f"{name} = {' '.join(counterexamples.values_text(t).split())}")
        stride = t.get("stride")
        if stride is not None and size > 1 and list(stride) != _contiguous(shape):
            notes.append(f"{name} non-contiguous, stride {tuple(stride)}")
    text = counterexamples.call_text(call)
    return f"{text} where {', '.join(notes)}" if notes else text


def _contiguous(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return strides[::-1]


def _errors(results_by_student: Mapping[str, Results], ids: list[str],
            t: i18n.Translator) -> list[dict[str, Any]]:
    """Errors and timeouts, by student: where, and the first line of the message. The
    properties of one drill that ended the same way (a file that does not import ends
    them all) are one row: its first property, and how many more."""
    rows: list[dict[str, Any]] = []
    for sid in ids:
        for ex in results_by_student[sid]["exercises"]:
            same: dict[tuple[str, str], dict[str, Any]] = {}
            for test in ex["tests"]:
                if test["outcome"] in (ERROR, TIMED_OUT):
                    message = present.first_line(present.split_traceback(present.message(test, t))[0])
                    message = message or present.label(test["outcome"], t)
                    row = same.get((test["outcome"], message))
                    if row is not None:
                        row["more"] += 1
                        continue
                    row = same[(test["outcome"], message)] = {
                        "student": sid, "href": student_href(sid), "exercise": ex["id"], "test": test["name"],
                        "outcome": test["outcome"], "message": message, "more": 0}
                    rows.append(row)
    return rows


MAX_FLAG_ROWS = 500  # the static scan's findings listed on the class page, all students together


def _flags(results_by_student: Mapping[str, Results], ids: list[str]) -> list[dict[str, Any]]:
    """The static scan's findings (forbidden APIs in the source, routes around the guard),
    by student: for the instructor to look at; they never changed a score."""
    rows: list[dict[str, Any]] = []
    for sid in ids:
        for ex in results_by_student[sid]["exercises"]:
            for flag in ex.get("static_flags") or []:
                if len(rows) >= MAX_FLAG_ROWS:
                    return rows
                if isinstance(flag, dict):
                    rows.append({"student": sid, "href": student_href(sid), "exercise": ex["id"],
                                 "name": str(flag.get("name", ""))[:80], "line": flag.get("line"),
                                 "code": str(flag.get("code", ""))[:200],
                                 "route": bool(flag.get("indirect"))})
    return rows


# ------------------------------------------------------------------ page

def render_html(results_by_student: Mapping[str, Results], problems: dict[str, str],
                course: Path, *, title: str | None = None, similarity: dict[str, Any] | None = None,
                lang: i18n.Lang = i18n.Lang.EN) -> str:
    """The class page as one self-contained HTML document in ``lang`` (same data, same bytes)."""
    folder = course / student_report.TEMPLATES_DIR
    if not (folder / CLASS_TEMPLATE).is_file():
        raise student_report.ReportError(i18n._(
            "no class report template at {path}: the course folder {course} needs {needed} (run "
            "inside the torchdrill checkout, or pass --course DIR)", path=folder / CLASS_TEMPLATE,
            course=course, needed=f"{student_report.TEMPLATES_DIR}/{CLASS_TEMPLATE}"))
    t = i18n.translator(lang)
    localized = {student: drill_texts.with_titles(r, course, lang) for student, r in results_by_student.items()}
    titles = {name: title for r in localized.values() for name, title in drill_texts.property_titles(r).items()}
    summary = class_summary(localized, problems, course_order(course), t)
    template = student_report.environment(folder, lang).get_template(CLASS_TEMPLATE)
    return template.render(
        s=summary,
        charts=charts(summary, t),
        title=title or t.gettext("Class report: {n} students", n=summary["student_count"]),
        csp=content_security_policy(),
        sort_script=Markup(SORT_SCRIPT),
        student_href=student_href,
        top_inputs=TOP_INPUTS,
        similarity=similarity_view.view(similarity, [ex["id"] for ex in summary["exercises"]], t),
        property_titles=titles,
    )


def write_class_report(results_by_student: Mapping[str, Results], problems: dict[str, str],
                       out: Path, course: Path, *, title: str | None = None,
                       similarity: dict[str, Any] | None = None, lang: i18n.Lang = i18n.Lang.EN) -> Path:
    """Render and write ``out/class.html`` atomically (in ``lang``); returns its path."""
    return write_atomically(ClassLayout(out).class_report,
                            render_html(results_by_student, problems, course, title=title,
                                        similarity=similarity, lang=lang))
