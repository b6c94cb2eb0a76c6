"""The student report: ``DIR/index.html``, rendered from ``results.json`` alone.

The template lives in one place, ``report_templates/student.html.j2`` at the
course root (the folder holding ``tests/``, found like ``grader.core.syllabus.find_course``
finds it), so a course can restyle its report without touching the engine.

Autoescaping is on for the whole template and the few filters that build markup
(``values_html``) escape every piece themselves: anything a submission returned
or printed reaches the page as text. The page also carries a Content Security
Policy that forbids scripts, so even a missed escape could not run one.

The report speaks one language (``i18n.Lang``, English by default): the templates' words
are gettext messages (``{{ _("...") }}``, ``ngettext``: jinja2's i18n extension, newstyle,
domain ``reports``), and each language has its own environment, made once and never
changed per render; the words the filters add (outcomes, the environment, reasons) and
the tests' kept messages (``results_json.message_text``) are in that language too.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache, partial
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from grader.core import drill_texts, i18n, scoring
from grader.core.errors import UsageError
from grader.core.files import write_atomically
from grader.core.layout import Layout
from grader.core.results_json import Results
from grader.reports import counterexamples, present

TEMPLATES_DIR = "report_templates"
STUDENT_TEMPLATE = "student.html.j2"


class ReportError(UsageError):
    """The report cannot be made (no template, unreadable results); one clear sentence."""


def templates_dir(course: Path) -> Path:
    """``course/report_templates``, checked to hold the student template."""
    folder = course / TEMPLATES_DIR
    if not (folder / STUDENT_TEMPLATE).is_file():
        raise ReportError(i18n._("no report template at {path}: the course folder {course} needs "
                                 "{needed} (run inside the torchdrill checkout, or pass --course DIR)",
                                 path=folder / STUDENT_TEMPLATE, course=course,
                                 needed=f"{TEMPLATES_DIR}/{STUDENT_TEMPLATE}"))
    return folder


def environment(folder: Path, lang: i18n.Lang = i18n.Lang.EN) -> jinja2.Environment:
    """A jinja2 environment over ``folder`` with autoescaping always on, speaking
    ``lang``: one per folder and language, made once (never changed per render)."""
    return _environment(str(folder), i18n.Lang(lang))


def _plural_number(n: Any) -> int:
    """The count gettext picks a plural form by: an int (a score may be a float)."""
    try:
        return int(n) if float(n) == int(n) else 2
    except (TypeError, ValueError, OverflowError):
        return 2


@cache
def _environment(folder: str, lang: i18n.Lang) -> jinja2.Environment:
    t = i18n.translator(lang)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,  # every template, whatever its file name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_gettext_callables(  # type: ignore[attr-defined]
        t.catalog.gettext, lambda s, p, n: t.catalog.ngettext(s, p, _plural_number(n)), newstyle=True)
    env.filters.update({
        "label": partial(present.label, t=t),
        "number": present.number,
        "kib": present.kib,
        "plural": present.plural,
        "percent": present.percent,
        "property_title": _property_title,
        "first_line": present.first_line,
        "call_text": partial(counterexamples.call_text, t=t),
        "value_text": partial(counterexamples.value_text, t=t),
        "tensor_summary": partial(counterexamples.tensor_summary, t=t),
        "traceback_text": partial(present.traceback_text, t=t),
        "values_html": values_html,
        "code": code,
        "when": partial(when, t=t),
        "css_id": css_id,
        "shape_text": shape_text,
    })
    env.globals.update({
        "score_text": present.score_text,
        "sorted_tests": present.sorted_tests,
        "main_problem": present.main_problem,
        "reasons": partial(present.reasons, t=t),
        "reasons_worth_listing": present.reasons_worth_listing,
        "message": partial(present.message, t=t),
        "property_points": scoring.property_points,
        "split_traceback": present.split_traceback,
        "not_run_here": partial(present.not_run_here, t=t),
        "not_run_reason": partial(present.not_run_reason, t=t),
        "environment_items": partial(present.environment_items, t=t),
        "status_counts": present.status_counts,
        "captured_output": present.captured_output,
        "call_tensors": partial(counterexamples.call_tensors, t=t),
        "call_ending": partial(counterexamples.call_ending, t=t),
        "tensors_in": counterexamples.tensors_in,
        "diff_lines": partial(counterexamples.diff_lines, t=t),
        "differing_field": counterexamples.differing_field,
        "marked_indices": counterexamples.marked_indices,
        "is_tensor": counterexamples.is_tensor,
        "PROBLEMS": present.PROBLEMS,
        "lang_tag": lang.html,
    })
    return env


def render_html(results: Results, course: Path, lang: i18n.Lang = i18n.Lang.EN) -> str:
    """The student report for ``results`` as one self-contained HTML page, in ``lang``."""
    template = environment(templates_dir(course), lang).get_template(STUDENT_TEMPLATE)
    localized = drill_texts.with_titles(results, course, lang)
    return template.render(results=localized, submission_file=submission_file,
                           property_titles=drill_texts.property_titles(localized))


def write_report(results: Results, out: Path, course: Path, lang: i18n.Lang = i18n.Lang.EN) -> Path:
    """Render and write ``out/index.html`` atomically; returns its path."""
    return write_atomically(Layout(out).report, render_html(results, course, lang))


# ------------------------------------------------------------------ filters

@jinja2.pass_context
def _property_title(context: jinja2.runtime.Context, test_name: str) -> str:
    """A property's title: the course's translation the page was given, else its name's words."""
    return present.property_title(test_name, context.get("property_titles"))


def values_html(tensor: dict[str, Any], marked: set[tuple[int, ...]] | None = None) -> Markup:
    """A described tensor's values, laid out like torch prints them, with the
    elements at ``marked`` indices wrapped in ``<mark>``. Every piece is escaped."""
    if isinstance(tensor.get("values"), str) and tensor["values"] != "...":
        return escape(tensor["values"])
    out = []
    for text, hit in counterexamples.value_cells(tensor.get("values"), tensor.get("shape"), marked):
        out.append(Markup("<mark>{}</mark>").format(text) if hit else escape(text))
    return Markup("").join(out)


def code(text: Any) -> Markup:
    """``text`` escaped, in ``<code>`` (a file, an id, a value inside a sentence)."""
    return Markup("<code>{}</code>").format(text)


def when(iso: str | None, t: i18n.Translator | None = None) -> str:
    """``2026-11-22T18:58:37+00:00`` -> ``2026-11-22 18:58 UTC``."""
    if not iso:
        return present.words(t).gettext("unknown")
    try:
        stamp = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    zone = "UTC" if stamp.utcoffset() is not None and not stamp.utcoffset() else stamp.strftime("%z")
    return f"{stamp:%Y-%m-%d %H:%M} {zone}".strip()


def css_id(*parts: str) -> str:
    """A stable fragment id from exercise and test names (``ex-tensors-one_hot``)."""
    text = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def shape_text(shape: list[int] | None) -> str:
    """``[2]`` -> ``(2,)``, as Python and torch write a shape."""
    return str(tuple(shape or ()))


def submission_file(results: Results, exercise_id: str) -> str:
    """Where the learner edits this exercise: ``<submission>/<exercise id>.py``."""
    root = results.get("submission") or ""
    exercise = next((e for e in results.get("exercises", []) if e.get("id") == exercise_id), None)
    if exercise is not None and exercise.get("source"):  # a notebook: its functions are in cells
        return str(exercise["source"].get("notebook") or root)
    if not root or (" " in root and root.endswith(")")):  # "exercises (default)"
        root = "exercises"
    return f"{root.rstrip('/')}/{exercise_id}.py"
