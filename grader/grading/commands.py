"""``torchdrill grade`` and ``torchdrill report``: grade one submission, render its report.

``grade`` opens what it is given (``grader.intake``: a folder, a zip, a notebook,
loose drill files), grades it (``grader.grading.pipeline.grade``) and updates
results.json once (``grader.core.record``: the drills graded replace their rows, the
others are kept, so ``grade --only A`` then ``--only B`` keeps both), then the report
of everything results.json holds.

``--format gradescope`` writes Gradescope's results with the writer the command line
set on the arguments (``write_gradescope``): Gradescope's room (``grader.gradescope``)
sits above this one.

``grade`` exits 0 whenever grading itself worked, whatever the score.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.core import course_secret, record, results_json, syllabus
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import _, ngettext
from grader.core.layout import Layout
from grader.core.results_json import Results
from grader.core.syllabus import CourseError, find_course
from grader.grading import options
from grader.grading.pipeline import grade, isolation
from grader.grading.request import GradingRequest
from grader.intake.submission import open_submission
from grader.reports import exports, present, student_report, table
from grader.sandbox import zygote


def cmd_grade(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    layout = Layout(Path(args.out)) if args.out else Layout.default(course)
    student_report.templates_dir(course)  # a missing template is reported now, not after grading
    # a bad secret stops here, before the grading
    secret = None if args.public_examples else course_secret.given(args.secret_file)
    submission = open_submission(args.submission, course)
    lang = args.lang  # the language the command speaks (grader.cli.main)
    request = GradingRequest(course=course, isolation=isolation(args.isolation, course, submission),
                             sandbox_off=tuple(args.sandbox_off or ()), limits=options.limits(args),
                             secret=secret, only=tuple(args.only or ()), profile=args.profile,
                             shrink=not args.no_shrink, workers=args.workers)
    # The zygote imports torch while this process does (with -n, pytest-xdist's
    # workers share it: ``SandboxLifecycle.pytest_configure_node``).
    zygote.start_early(request.isolation, request.sandbox_off,
                       zygote.warm_for(len(args.only) if args.only else None))
    results = grade(request, submission, show_progress=True)
    unwritten: list[OSError] = []  # the report, when the record was written but it could not be

    def write_report(merged: Results) -> None:
        try:
            student_report.write_report(merged, layout.root, course, lang)
        except OSError as exc:
            unwritten.append(exc)

    try:  # only a finished grading updates the record: these drills' rows, the others kept
        done = record.update(layout.results, results, _course_order(course), then=write_report)
    except OSError as exc:
        table.render(results, verbose=args.verbose, course=course)
        raise UsageError(_("cannot record this grading in {path}: {error}; the record there is as it was",
                           path=layout.results, error=exc)) from None
    table.render(results, verbose=args.verbose, course=course)
    if done.kept:
        print(ngettext("{n} drill graded earlier is kept: {score} points in all ('torchdrill list' and "
                       "the report show every drill)",
                       "{n} drills graded earlier are kept: {score} points in all ('torchdrill list' and "
                       "the report show every drill)", len(done.kept),
                       score=present.score_text(done.results["score"], done.results["max_score"])))
    replaced = record.replaced_note(layout.results, done)
    if replaced is not None:
        print(replaced)
    print(_("isolation: {summary}", summary=table.isolation_summary(results)))
    drawn = results["environment"].get("examples") or {}
    print(_("examples: official, from the course secret {secret} (wider ranges)", secret=drawn.get("secret"))
          if drawn.get("drawn") == "secret" else _("examples: public (what every learner can replay)"))
    print(_("results: {path}", path=layout.results))
    if unwritten:
        raise UsageError(_("cannot write the report {path}: {error}", path=layout.report, error=unwritten[0]))
    print(_("report: {path}", path=layout.report))
    _exports(done.results, layout.root, args, course)
    return EXIT_OK


def _course_order(course: Path) -> list[str]:
    """The course's drills in order (results.json lists its drills so); none when
    course.toml cannot be read (a broken one must not stop a grade)."""
    try:
        return syllabus.load(course).ids
    except CourseError:
        return []


def cmd_report(args: argparse.Namespace) -> int:
    """Re-render the report (and exports) from a results.json, without grading."""
    path = Path(args.results)
    try:
        results = results_json.read(path)
    except (OSError, ValueError) as exc:
        raise UsageError(_("cannot read {path}: {error}", path=path, error=exc)) from None
    out = Path(args.out) if args.out else path.parent
    course = _report_course(args, path)
    table.render(results, verbose=args.verbose, course=course)
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
    lang = args.lang  # the language the command speaks (grader.cli.main)
    print(_("report: {path}", path=student_report.write_report(results, out, course, lang)))
    _exports(results, out, args, course)


def _exports(results: Results, out: Path, args: argparse.Namespace, course: Path | None = None) -> None:
    """Write the exports asked for; print where each went. Gradescope's results are
    written by ``args.write_gradescope`` (``grader.gradescope.results.write_gradescope``,
    set by the command line)."""
    lang = args.lang
    if "gradescope" in (args.format or []):
        print(_("gradescope: {path}", path=args.write_gradescope(results, out, lang, course)))
    if args.junit:
        print(_("junit: {path}", path=exports.write_junit(results, Path(args.junit))))
