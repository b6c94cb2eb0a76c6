"""Gradescope's ``results.json``, made from a torchdrill results document alone (like the
HTML report, so it can be written again later with ``torchdrill report``): for one
submission (``gradescope``; ``grade --format gradescope`` writes it to
``DIR/gradescope/results.json``, the run on Gradescope to
``/autograder/results/results.json``) and for a class (``write_gradescope_class``:
``DIR/gradescope/<ID>.json`` per student, ``grade-all``, ``merge``, ``extend`` and
``override`` with ``--format gradescope``).

One Gradescope test per property, named ``<exercise id>: <test name>``, worth its
share of the exercise's points. Properties marked ``hidden`` are
``after_published``. Properties not run here are worth 0 of 0 and say why, so a
pending property never shows as a zero. What a student reads is in the language
asked for; these words are the reports' (domain ``reports``, ``babel-reports.cfg``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.core import drill_texts, i18n, scoring
from grader.core.errors import UsageError
from grader.core.files import write_atomically
from grader.core.layout import ClassLayout, Layout
from grader.core.outcomes import NOT_RUN, PASSED
from grader.core.results_json import Results
from grader.core.students import student_id_problem
from grader.reports import counterexamples, exports, present, term_view


class ExportError(UsageError, ValueError):
    """An export cannot be written as asked (say, a student id that is no file name)."""


# ------------------------------------------------------------------ one submission

def gradescope(results: Results, lang: i18n.Lang = i18n.Lang.EN, course: Path | None = None) -> dict[str, Any]:
    """Gradescope's autograder ``results.json`` for a torchdrill results document; what a
    student reads there is in ``lang`` (the course's own phrases too, given ``course``)."""
    words = i18n.translator(lang)
    if course is not None:
        results = drill_texts.with_titles(results, course, lang)
    tests = []
    for ex in results["exercises"]:
        for t in ex["tests"]:
            tests.append(_gradescope_test(ex, t, words))
    term = term_view.term_of(results)
    return {
        "score": results["score"] if term is None else term["final"],  # a term's final points are the grade
        "max_score": results["max_score"],
        "output": _gradescope_summary(results, words),
        "output_format": "text",  # plain text: submission strings are never rendered as HTML
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _gradescope_test(ex: Mapping[str, Any], t: Mapping[str, Any], words: i18n.Translator) -> dict[str, Any]:
    share = scoring.property_points(ex, t)
    worth = round(share, 4) if share is not None else 0.0
    passed = t["outcome"] == PASSED
    test: dict[str, Any] = {
        "name": f"{ex['id']}: {t['name']}",
        "score": worth if passed else 0.0,
        "max_score": worth,
        "output": exports.truncate(_test_output(t, words), t=words),
        "visibility": "after_published" if t.get("hidden") else "visible",
        "tags": [ex["id"], *t.get("markers", [])],
    }
    if t["outcome"] != NOT_RUN:
        test["status"] = "passed" if passed else "failed"
    return test


def _test_output(t: Mapping[str, Any], words: i18n.Translator) -> str:
    outcome = present.label(t["outcome"], words)
    if t["outcome"] == PASSED:
        return outcome
    if t["outcome"] in present.PROBLEMS:
        return f"{outcome}: {counterexamples.problem_text(t, words)}"
    said = present.not_run_reason(t, words) if t["outcome"] == NOT_RUN else present.message(t, words)
    return f"{outcome}: {said}".rstrip(": ")


def _gradescope_summary(results: Results, words: i18n.Translator) -> str:
    lines = [words.gettext("torchdrill {version}: {score} points", version=results.get("grader_version", ""),
                           score=present.score_text(results["score"], results["max_score"]))]
    term = term_view.term_of(results)
    if term is not None:
        lines += [*term_view.summary_lines(term, words), ""]
    for ex in results["exercises"]:
        score = (words.gettext("pending (not run here)") if ex["status"] == NOT_RUN
                 else present.score_text(ex["score"], ex["max_score"]))
        lines.append(f"{ex['id']}: {score}, {present.label(ex['status'], words)}")
    return "\n".join(lines)


def write_gradescope(results: Results, out: Path, lang: i18n.Lang = i18n.Lang.EN,
                     course: Path | None = None) -> Path:
    """Write ``out/gradescope/results.json``; returns its path."""
    path = Layout(out).gradescope
    write_atomically(path, json.dumps(gradescope(results, lang, course), indent=1) + "\n")
    return path


# ------------------------------------------------------------------ a class

# A student id becomes a file name: the rule grader.core.students gives student ids
# (ASCII letters, digits and ``. _ - @ +``, starting with a letter or digit, at most
# 100 characters), so no path separator, no hidden file, no command-line option;
# and none of the names Windows reserves (``CON.json`` cannot be made there).


def check_file_id(student_id: str) -> str:
    """``student_id`` if it is safe as a file name everywhere, else ExportError."""
    problem = student_id_problem(student_id) if isinstance(student_id, str) else "not a string"
    if problem:
        raise ExportError(f"student id {student_id!r} is not a safe file name: {problem}")
    return student_id


def write_gradescope_class(results_by_student: Mapping[str, Results], out: Path,
                           lang: i18n.Lang = i18n.Lang.EN, course: Path | None = None) -> list[Path]:
    """Write ``out/gradescope/<ID>.json`` (Gradescope's results, as ``gradescope``
    makes them) for every student, sorted by id; returns the paths.

    Every id is checked before anything is written: an id that is no safe file
    name, or two ids that differ only in case (one file on macOS and Windows),
    stop the export with an ExportError naming them."""
    ids = sorted(results_by_student)
    folded: dict[str, str] = {}
    for sid in ids:
        try:
            check_file_id(sid)
        except ExportError as exc:
            raise ExportError(f"cannot write gradescope/<ID>.json for {sid!r}: {exc}") from None
        other = folded.setdefault(sid.casefold(), sid)
        if other != sid:
            raise ExportError(f"cannot write gradescope/<ID>.json: student ids {other!r} and "
                              f"{sid!r} differ only in case, and would share one file on a "
                              "case-insensitive file system")
    paths = []
    for sid in ids:
        path = ClassLayout(out).gradescope / f"{sid}.json"
        write_atomically(path, json.dumps(gradescope(results_by_student[sid], lang, course), indent=1) + "\n")
        paths.append(path)
    return paths
