"""Grading one submission on Gradescope: what ``run_autograder`` runs (``python -I -m
grader.gradescope.run``) inside the image ``torchdrill gradescope-autograder``
built (``grader.gradescope.autograder``).

It finds the submission in any layout ``grade-all`` accepts (a folder laid out like
``exercises/``, a handout folder, a ``.zip`` of either, a notebook) or as loose
drill files (``one_hot.py``: what uploading files one by one gives), grades it in
the sandbox with every test (hidden ones become ``after_published``) and writes
Gradescope's results. It always writes a result: a submission that cannot be
graded scores 0 with the reason; a failure of the grader itself is a message to
the student and no score (``extra_data.torchdrill`` is ``grader_failed``), never a zero.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from grader.core import assignments, course_secret, i18n, results_json, syllabus, term_grades
from grader.core.errors import GraderFailed, NotGradable, UsageError
from grader.core.files import write_atomically
from grader.core.i18n import _
from grader.core.isolation import Isolation
from grader.core.results_json import Results
from grader.gradescope import results as gradescope_results
from grader.gradescope.facts import (
    CONFIG,
    COURSE,
    DEFAULT_ROOT,
    PAYLOAD,
    ROOT_ENV,
    SECRET,
    STUDENT,
    grader_failed_result,
    not_gradable_result,
)
from grader.grading.pipeline import grade
from grader.grading.request import GradingRequest, Limits
from grader.intake.submission import from_files, open_submission

METADATA = "submission_metadata.json"  # Gradescope's: when it was submitted, the due dates


def grade_submission(root: Path, config: dict[str, Any]) -> Results:
    """Grade ``root/submission`` with the course in ``root/source/torchdrill/course``:
    opened by the one intake (any layout ``grade-all`` takes, one ``.zip`` in it, loose
    drill files) and graded by the one pipeline. Raises ``NotGradable`` or ``GraderFailed``."""
    course = root / "source" / PAYLOAD / COURSE
    folder = root / STUDENT
    try:
        submission = open_submission(folder, course, student=STUDENT)
    except NotGradable as exc:
        raise NotGradable(str(exc).replace(f"{folder.name}/", "your submission", 1)) from None
    secret_file = root / "source" / PAYLOAD / SECRET
    if submission.folder is not None:  # graded from a copy: the upload folder stays as it came
        submission = from_files(STUDENT, submission.files)
    given = config.get("isolation")
    request = GradingRequest(course=course, isolation=Isolation(given) if given in set(Isolation) else Isolation.SANDBOX,
                             limits=Limits(**config.get("limits") or {}), shrink=bool(config.get("shrink", True)),
                             secret=course_secret.read(secret_file) if secret_file.is_file() else None,
                             only=tuple(config.get("only") or ()), profile=config.get("profile"))
    results = grade(request, submission)
    if submission.notebook is not None:
        results["submission"] = str(submission.notebook["notebook"])
    return results


def term_from_metadata(root: Path, results: Results) -> dict[str, Any] | None:
    """The late penalty of this submission, from Gradescope's ``submission_metadata.json``.

    Gradescope's dates are the ones the student sees, so they replace the course's
    for every assignment of ``course.toml`` with a drill graded here: its
    ``assignment.due_date`` and ``late_due_date`` (the late window is the time
    between them), the student's own ``users[0].assignment`` dates (an extension)
    and ``created_at`` (when it was submitted); the late policy is the course's.
    None when there is no metadata or the course has no assignment graded here."""
    path = root / METADATA
    course = root / "source" / PAYLOAD / COURSE
    try:
        meta = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError) as exc:  # Gradescope's file, not the student's: grade without a penalty
        print(f"{path}: not read ({exc}): no late penalty", file=sys.stderr)
        meta = None
    if not isinstance(meta, dict):
        return None
    graded = {ex["id"] for ex in results["exercises"]}
    found = [a for a in assignments.load(course) if set(a.drills) & graded]
    created = _when(meta.get("created_at"))
    if not found or created is None:
        return None
    dates: dict[str, Any] = _table(meta.get("assignment"))
    users = meta.get("users")
    own: dict[str, Any] = _table(_table(users[0]).get("assignment")) if isinstance(users, list) and users else {}
    due, late_due = _when(dates.get("due_date")), _when(dates.get("late_due_date"))
    own_due, own_late = _when(own.get("due_date")), _when(own.get("late_due_date"))
    patched, extensions = [], {}
    for a in found:
        start = due or a.due
        window = (late_due - start) if late_due is not None else a.late_window
        if own_due is not None and own_due != start:
            extensions[a.name] = term_grades.Extension(until=own_due.isoformat(), reason="Gradescope extension",
                                                       by="Gradescope")
            window = (own_late - own_due) if own_late is not None else window
        patched.append(replace(a, due=start, late_window=window))
    times = {a.name: term_grades.SubmissionTime(created.isoformat(), METADATA, term_grades.TRUSTED)  # the platform's
             for a in found}
    return term_grades.grade(results, tuple(patched), times=times, extensions=extensions, course=course)


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _when(text: Any) -> datetime | None:
    """An aware datetime from Gradescope's ISO text; None for a missing or odd one."""
    try:
        when = datetime.fromisoformat(text) if isinstance(text, str) and text else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def notebook_note(results: Results) -> str:
    """For a notebook: which cell each graded function came from (empty otherwise), in
    the language of the running command."""
    lines = []
    for ex in results.get("exercises", []):
        source = ex.get("source")
        if not source:
            continue
        where = [_("{function}() cell {cell}, line {line}", function=f["name"], cell=f["cell"], line=f["line"])
                 for f in source.get("functions", [])]
        where += [_("{function}() not defined (graded as the stub)", function=name)
                  for name in source.get("from_stub", [])]
        if source.get("problem"):
            where.append(source["problem"])
        lines.append(_("{drill}: {where}", drill=ex["id"], where=_("; ").join(where)))
    if not lines:
        return ""
    notebook = next(ex["source"]["notebook"] for ex in results["exercises"] if ex.get("source"))
    return "\n\n" + _("Read from your notebook {notebook} (cells counted from 1, markdown cells included; "
                      "the last definition of each function counts, other code is not run):",
                      notebook=notebook) + "\n" + "\n".join(lines)


def course_lang(root: Path) -> i18n.Lang:
    """The language the student reads: ``$TORCHDRILL_LANG``, else the course's, else the
    locale (``i18n.choose``); English when none of them names one this course speaks."""
    try:
        default = syllabus.load(root / "source" / PAYLOAD / COURSE).language
    except (syllabus.CourseError, OSError):
        default = None
    try:
        return i18n.choose(None, default)
    except UsageError:
        return i18n.Lang.EN


def student_answer(root: Path, results: Results, lang: i18n.Lang) -> dict[str, Any]:
    """Gradescope's results for ``results``, every word in ``lang``: the engine's from its
    catalogs, the drills' own (property titles, the tests' failure phrases) from the
    course's ``locales/``."""
    course = root / "source" / PAYLOAD / COURSE
    with i18n.speaking(lang):
        found = gradescope_results.gradescope(results, lang, course)
        found["output"] += notebook_note(results)
    return found


def run(root: Path) -> dict[str, Any]:
    """Grade ``root/submission`` and write ``root/results/results.json`` (always), in the
    course's language."""
    with i18n.speaking(course_lang(root)):
        return _run(root)


def _run(root: Path) -> dict[str, Any]:
    started = time.perf_counter()
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    drills: list[str] = []
    try:
        config = json.loads((root / "source" / PAYLOAD / CONFIG).read_text(encoding="utf-8"))
        drills = list(config.get("drills") or [])
        results = grade_submission(root, config)
        term = term_from_metadata(root, results)
        if term is not None:
            results["term"] = term
        results_json.write(results, results_dir / "torchdrill-results.json")  # for the instructor
        answer = student_answer(root, results, course_lang(root))
        print(f"graded: {answer['score']:g} / {results['max_score']:g}")
    except NotGradable as exc:
        answer = not_gradable_result(str(exc), drills)
        print(f"not gradable: {exc}")
    except GraderFailed as exc:
        answer = grader_failed_result(str(exc).splitlines()[0])
        print(f"grading failed: {exc}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - whatever happens, the student reads a result
        answer = grader_failed_result(f"{type(exc).__name__}: {exc}")
        traceback.print_exc()
    answer["execution_time"] = round(time.perf_counter() - started, 2)
    write_atomically(results_dir / "results.json", json.dumps(answer, indent=1) + "\n")
    return answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.gradescope.run",
                                     description="Grade a Gradescope submission (run_autograder calls it).")
    parser.add_argument("--root", default=os.environ.get(ROOT_ENV, DEFAULT_ROOT),
                        help=f"Gradescope's folder (default: ${ROOT_ENV} or {DEFAULT_ROOT})")
    run(Path(parser.parse_args(argv).root))
    return 0


if __name__ == "__main__":
    sys.exit(main())

