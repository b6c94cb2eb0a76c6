"""``torchdrill grade`` and ``torchdrill report``: grade one submission, render its report.

``grade`` opens what it is given (``grader.intake``: a folder, a zip, a notebook,
loose drill files), grades it (``grader.grading.pipeline.grade``) and writes
results.json once, then the report.

``grade`` exits 0 whenever grading itself worked, whatever the score.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.core import course_secret, i18n, results_json
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _
from grader.core.layout import Layout
from grader.core.results_json import Results
from grader.core.syllabus import find_course
from grader.grading import options
from grader.grading.pipeline import grade, isolation
from grader.intake.submission import open_submission
from grader.reports import exports, student_report, table
from grader.sandbox import zygote


def cmd_grade(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    layout = Layout(Path(args.out)) if args.out else Layout.default(course)
    student_report.templates_dir(course)  # a missing template is reported now, not after grading
    if not args.public_examples:
        course_secret.given(args.secret_file)  # a bad secret stops here, before the grading
    submission = open_submission(args.submission, course)
    mode = isolation(args.isolation, course, submission)
    # The zygote imports torch while this process does (with -n, pytest-xdist's
    # workers share it: ``GradingSession.pytest_configure_node``).
    zygote.start_early(mode, args.sandbox_off or (),
                       zygote.warm_for(len(args.only) if args.only else None))
    results = grade(course, submission, only=args.only, workers=args.workers, profile=args.profile,
                    extra_args=options.pytest_args(args, mode), show_progress=True)
    results_json.write(results, layout.results)  # only a finished grading replaces the last one
    table.render(results, verbose=args.verbose)
    print(_("isolation: {summary}", summary=table.isolation_summary(results)))
    drawn = results["environment"].get("examples") or {}
    print(_("examples: official, from the course secret {secret} (wider ranges)", secret=drawn.get("secret"))
          if drawn.get("drawn") == "secret" else _("examples: public (what every learner can replay)"))
    print(_("results: {path}", path=layout.results))
    _publish(results, layout.root, course, args)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    """Re-render the report (and exports) from a results.json, without grading."""
    path = Path(args.results)
    try:
        results = results_json.read(path)
    except (OSError, ValueError) as exc:
        raise UsageError(_("cannot read {path}: {error}", path=path, error=exc)) from None
    out = Path(args.out) if args.out else path.parent
    course = _report_course(args, path)
    table.render(results, verbose=args.verbose)
    _publish(results, out, course, args)
    return EXIT_OK


def _report_course(args: argparse.Namespace, results_path: Path) -> Path:
    """--course, else the course around the current folder, else around the results."""
    if args.course:
        return Path(args.course).resolve()
    try:
        return find_course(Path.cwd())
    except UsageError as not_here:
        try:
            return find_course(results_path.resolve().parent)
        except UsageError:
            raise not_here from None


def _publish(results: Results, out: Path, course: Path, args: argparse.Namespace) -> None:
    """Write index.html, and the exports asked for; print where each went."""
    student_report.templates_dir(course)
    lang = getattr(args, "lang", i18n.Lang.EN)  # the language the command speaks (grader.cli.main)
    print(_("report: {path}", path=student_report.write_report(results, out, course, lang)))
    if "gradescope" in (args.format or []):
        print(_("gradescope: {path}", path=exports.write_gradescope(results, out, lang)))
    if args.junit:
        print(_("junit: {path}", path=exports.write_junit(results, Path(args.junit))))
