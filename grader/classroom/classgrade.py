"""``torchdrill grade-all`` and ``torchdrill merge``: grade a whole class.

One process, the coordinator, plans the work, hands each submission to a grading
process (``grader.classroom.gradeproc``: a local pool of them, or tasks on a Dask cluster:
``grader.classroom.runners``),
and is the only writer of ``DIR/gradebook.sqlite``. For each graded submission it
writes the student's ``results.json`` and report (atomically), then records the
results in one transaction. A ``kill -9`` at any moment therefore leaves every
submission either recorded whole or not at all, and the rerun grades exactly the
ones not recorded: a submission whose content hash and test-suite hash are already
in the gradebook is skipped (unless ``--force``). The class report and the exports
are made at the end from the gradebook alone.

With ``--scheduler``, a cluster that has workers with a ``GPU`` resource also gets
one ``cuda`` task per submission, placed on those workers only; its outcomes are
folded into the submission's results by test id before they are recorded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from grader.classroom import gradebook, gradeproc, similarity, term, term_tables
from grader.classroom.gradebook import Gradebook, GradebookError
from grader.classroom.jobs import GradingAnswer, GradingJob, Part
from grader.classroom.publishing import gradescope_files, publish, write_student
from grader.classroom.runners import DaskRunner, Job, LocalRunner, Runner
from grader.core import assignments, course_secret, i18n, results_json
from grader.core.course_secret import Secret
from grader.core.errors import EXIT_GRADER_FAILED, EXIT_OK, NotGradable, UsageError
from grader.core.i18n import N_, _
from grader.core.isolation import Isolation
from grader.core.layout import ClassLayout
from grader.core.results_json import Results, fold, replace_exercises
from grader.core.stubs import stub_source
from grader.core.syllabus import exercise_tests, find_course
from grader.core.term_grades import SubmissionTime
from grader.grading import options
from grader.grading.pipeline import check_only
from grader.intake import notebooks, times
from grader.intake.archives import pack
from grader.intake.reader import Entry, discover, lookalike_notes
from grader.intake.submission import from_entry
from grader.reports import present, similarity_view, student_report
from grader.sandbox import confine


@dataclass
class Tally:
    """What a grade-all run did, for the summary and the exit code."""

    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # not a submission
    time_problems: dict[str, str] = field(default_factory=dict)  # graded with no time: its time was unreadable
    lookalikes: dict[str, str] = field(default_factory=dict)  # graded, but its id looks like another's
    failed: dict[str, str] = field(default_factory=dict)  # the grader could not grade it


# ------------------------------------------------------------------ planning

class ClassGrading:
    """One grade-all run: plan the jobs, run them, record and publish."""

    def __init__(self, course: Path, out: Path, template: GradingJob, only: list[str] | None,
                 force: bool, console: Console, secret: Secret | None = None,
                 lang: i18n.Lang = i18n.Lang.EN):
        """``template``: how every submission is graded (its student and files are each
        job's own); ``secret``: the course secret the examples are drawn from (None:
        the public ones); its text travels in each job, to whichever machine grades it."""
        self.course, self.out, self.console = course, out, console
        self.lang = lang  # the language of the students' reports
        self.template = template
        self.only, self.force = only, force
        self.suite = results_json.suite_hash(course / "tests", secret.digest if secret else None)
        self.wanted = set(only or exercise_tests(course))
        self.stubs = notebooks.drill_functions(course, sorted(exercise_tests(course)))  # read once for the class
        self.sources: dict[str, dict[str, bytes]] = {}  # student -> files graded (similarity)
        self.tally = Tally()
        self.when: Callable[[Entry], times.Found | None] = lambda entry: None
        self.term_assignments: list[str] = []  # the assignments whose drills this run grades
        self.times: dict[str, dict[str, SubmissionTime]] = {}  # student -> assignment -> when, from, trust

    def use_times(self, when: Callable[[Entry], times.Found | None], course: Path) -> None:
        """Read each entry's submission time with ``when`` (``times.Reader.time_of``); it
        is recorded for every assignment with a drill this run grades. A time ``when``
        cannot read (``times.TimeProblem``) is that entry's problem: it is graded with
        no time, and the problem is reported and recorded for it."""
        self.when = when
        self.term_assignments = [a.name for a in term.assignments_of(course) if set(a.drills) & self.wanted]

    def plan(self, book: Gradebook, entries: list[Entry], gpu: bool) -> list[Job]:
        # ids that look alike (in this folder, or like a student of the gradebook): graded, and said loudly
        self.tally.lookalikes = lookalike_notes(entries, known=book.students())
        for note in self.tally.lookalikes.values():
            self.console.print("[bold yellow]" + escape(note) + "[/]", highlight=False)
        current = book.current()
        recorded_problems = book.problems()
        stub_paths = {f"{drill}.py": (self.course / "exercises" / f"{drill}.py")
                      for drill in self.wanted}
        stubs = {rel: path.read_bytes() for rel, path in stub_paths.items() if path.is_file()}
        jobs: list[Job] = []
        for entry in entries:
            try:
                submission = from_entry(entry, self.course, stubs=self.stubs)  # a notebook: no cell runs here
            except NotGradable as exc:
                self._problem(book, entry.student, str(exc))
                continue
            files = dict(submission.files)
            self.sources[entry.student] = files
            digest = submission.content_hash
            found = self._time_of(book, entry) if self.term_assignments else None
            if found is not None:
                self.times[entry.student] = {a: found.recorded() for a in self.term_assignments}
            earlier = (current[entry.student]
                       if book.is_graded(entry.student, digest, self.suite) else None)
            if earlier is not None and not self.force \
                    and self.wanted <= {e["id"] for e in earlier["exercises"]}:
                self.tally.skipped.append(entry.student)
                if entry.student in self.times:  # graded before its time was known: keep a known one
                    book.record_times(entry.student, self.times[entry.student], replace=False)
                graded_note = self._graded_problem(entry.student)
                if graded_note is not None:
                    book.record_problem(entry.student, graded_note)
                elif entry.student in recorded_problems:  # the entry reads well now, and is graded
                    book.clear_problem(entry.student)
                continue
            if not self.only or self.force:
                earlier = None  # nothing of it is kept
            task = replace(self.template, student=entry.student, files=pack(files), kind=submission.kind,
                           notebook=submission.notebook)
            attempted = sum(files.get(rel) not in (None, stub) for rel, stub in stubs.items())
            jobs.append(Job(entry.student, digest, task, attempted=attempted, earlier=earlier))
            if gpu:
                jobs.append(Job(entry.student, digest, replace(task, part=Part.CUDA),
                                attempted=attempted, earlier=earlier))
        # Longest first, so no worker is left with a long grading at the end while the
        # others idle. A stub's drill is graded in a blink ("not attempted" at the first
        # call), so the number of drills that differ from their stub is the estimate.
        jobs.sort(key=lambda job: (-job.attempted, job.student, job.task.part))
        return jobs

    def _time_of(self, book: Gradebook, entry: Entry) -> times.Found | None:
        """The entry's time; None when it has none, or one that cannot be read (the
        entry's problem, in the tally, saying which time it is graded with)."""
        try:
            return self.when(entry)
        except times.TimeProblem as exc:
            known = term_tables.inputs(book.connection, [entry.student])[entry.student].times
            kept = [known[a] for a in self.term_assignments if a in known]
            self.tally.time_problems[entry.student] = (
                _("{problem}; the time recorded before still counts: {at} ({source})", problem=exc,
                  at=kept[0].at, source=kept[0].source) if kept else
                _("{problem}; graded as never late", problem=exc))
            self.console.print(f"[yellow]{entry.student}[/]: " + escape(self._time_problem(entry.student)),
                               highlight=False)
            return None

    def _graded_problem(self, student: str) -> str | None:
        """What the gradebook and class.html say of a student graded with a problem: an
        unreadable submission time, an id that looks like another's."""
        notes = [self._time_problem(student)] if student in self.tally.time_problems else []
        notes += [self.tally.lookalikes[student]] if student in self.tally.lookalikes else []
        return "; ".join(notes) or None

    def _time_problem(self, student: str) -> str:
        """What the gradebook and class.html say of a student whose time was unreadable."""
        return _("its submission time could not be read: {problem}", problem=self.tally.time_problems[student])

    def _problem(self, book: Gradebook, student: str, reason: str) -> None:
        book.record_problem(student, reason)
        self.tally.problems[student] = reason
        self.console.print(f"[yellow]{student}[/]: " + _("not graded: {reason}", reason=reason), highlight=False)

    # -------------------------------------------------------------- running

    def run(self, book: Gradebook, runner: Runner, jobs: list[Job]) -> None:
        students = sorted({job.student for job in jobs})
        parts = {s: sum(1 for j in jobs if j.student == s) for s in students}
        answers: dict[str, dict[Part, GradingAnswer]] = {s: {} for s in students}
        futures = {runner.submit(job): job for job in jobs}
        with _progress(self.console) as progress:
            task = progress.add_task("grading", total=len(students))
            for future in runner.completed(list(futures)):
                job = futures[future]
                try:
                    answer = future.result()
                except Exception as exc:  # noqa: BLE001 - a Dask worker lost, a task that could not run
                    answer = GradingAnswer(error=f"{type(exc).__name__}: {exc}")
                answers[job.student][job.task.part] = answer
                if len(answers[job.student]) == parts[job.student]:
                    self._take(book, job, answers.pop(job.student))
                    progress.advance(task)
                    if not self.console.is_terminal:  # a log (CI): one line per submission
                        done = int(progress.tasks[0].completed)
                        self.console.print(f"[{done}/{len(students)}] {job.student} "
                                           f"({answer.wall_s:.1f} s)", highlight=False)

    def _take(self, book: Gradebook, job: Job, answers: dict[Part, GradingAnswer]) -> None:
        student = job.student
        errors = [a.error for a in answers.values() if a.error is not None]
        if errors:
            return self._failed(book, student, errors[0])
        answer, cuda = answers[Part.ALL], answers.get(Part.CUDA)
        results = answer.results
        if results is None:
            return self._failed(book, student, "the grading process sent no results")
        if results.get("suite_hash") != self.suite:
            return self._failed(book, student, (
                f"graded with another version of the tests (suite {results.get('suite_hash')}, "
                f"this course's is {self.suite}): update the course on {answer.worker}"))
        if cuda is not None and cuda.results is not None:  # the cuda part, from a GPU worker
            try:
                results, _folded = fold(results, cuda.results)
            except results_json.ResultsError as exc:
                return self._failed(book, student, f"its cuda tests could not be folded in: {exc}")
        results["environment"]["grading"] = {  # where it ran, for the instructor's record
            "worker": answer.worker, **({"cuda_worker": cuda.worker} if cuda is not None else {})}
        if job.earlier is not None:  # --only: the exercises not graded now stay as they were
            results = replace_exercises(job.earlier, results)
        write_student(self.out, self.course, student, results, self.lang)
        book.record(student, job.content_hash, results, wall_s=answer.wall_s,
                    tests_s=answer.tests_s, worker=answer.worker, times=self.times.get(student))
        note = self._graded_problem(student)
        if note is not None:  # after record(), which clears the entry's problem
            book.record_problem(student, note)
        self.tally.graded.append(student)

    def _failed(self, book: Gradebook, student: str, reason: str) -> None:
        book.record_problem(student, f"grading failed: {reason}")
        self.tally.failed[student] = reason
        self.console.print(f"[red]{student}[/]: " + _("grading failed: {message}", message=reason.splitlines()[0]),
                           highlight=False)


class _Rate(ProgressColumn):
    """Submissions per minute so far."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        if not elapsed or not task.completed:
            return Text("-/min")
        return Text(f"{task.completed / elapsed * 60:.1f}/min")


@contextmanager
def _progress(console: Console) -> Iterator[Progress]:
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _Rate(),
                  TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                  console=console, disable=not console.is_terminal) as progress:
        yield progress


# ------------------------------------------------------------------ commands

def cmd_grade_all(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    folder = Path(args.submissions)
    if not folder.is_dir():
        raise UsageError(_("SUBMISSIONS {folder} is not a folder: give a folder with one entry (folder or "
                           ".zip) per student", folder=folder))
    out = Path(args.out).resolve()
    if args.workers is not None and args.workers < 1:
        raise UsageError(_("--workers must be at least 1 (got {workers})", workers=args.workers))
    if not 0 < args.similarity_threshold <= 1:
        raise UsageError(_("--similarity-threshold is a share of a student's code, more than 0 and at "
                           "most 1 (got {threshold})", threshold=f"{args.similarity_threshold:g}"))
    off = list(args.sandbox_off or [])
    if not args.allow_degraded and not args.scheduler:  # a cluster's machines check for themselves
        refused = confine.refuse_degraded(args.isolation, off)
        if refused:
            raise UsageError(refused)
    student_report.templates_dir(course)  # a missing template is reported now, not after grading
    drawn = course_secret.official(args.secret_file, args.public_examples)
    check_only(course, args.only)  # an unknown --only drill stops here
    # The secret travels in the jobs (a cluster's machines have no file of it), not as a path.
    template = GradingJob(student="", course=str(course), files=b"", isolation=Isolation(args.isolation),
                          limits=options.limits(args), shrink=not args.no_shrink,
                          only=args.only, profile=args.profile, marker=args.marker,
                          secret=drawn.text if drawn else None, sandbox_off=off,
                          allow_degraded=args.allow_degraded)
    console = Console(stderr=True, soft_wrap=True)
    console.print(_("examples: official, from the course secret {source} ({digest})", source=drawn.source,
                    digest=drawn.digest) if drawn else
                  _("examples: public (--public-examples): every student can replay them"), highlight=False)
    grading = ClassGrading(course, out, template, args.only, args.force, console, secret=drawn,
                           lang=args.lang)
    zone = assignments.term_zone(course)
    table = times.read_option(args.times, zone) if args.times else None  # --times zip is refused here
    reader = times.Reader(folder.resolve(), zone, table, student_files=args.student_timestamps)
    grading.use_times(reader.time_of, course)
    entries = discover(folder.resolve(), exercise_tests(course))
    if grading.term_assignments:  # an id mistyped in the instructor's times
        for warning in [*(table.warnings if table else []), *reader.unused({e.student for e in entries})]:
            console.print("[yellow]" + _("submission times") + "[/]: " + escape(warning), highlight=False)
    elif args.times or args.student_timestamps:
        console.print("[yellow]" + _("submission times") + "[/]: " + escape(_(
            "not recorded: no [[assignments]] of course.toml has a drill this run grades")), highlight=False)
    gradeproc.remove_stale()
    started = time.perf_counter()
    runner: LocalRunner | DaskRunner = (DaskRunner(args.scheduler) if args.scheduler
                                        else LocalRunner(args.workers or os.cpu_count() or 1))
    try:
        with _open_gradebook(out) as book:
            jobs = grading.plan(book, entries, gpu=runner.has_gpu_workers())
            try:
                grading.run(book, runner, jobs)
            except KeyboardInterrupt:
                console.print(_("interrupted: {count} graded and recorded; run the same command again to "
                                "grade the rest", count=len(grading.tally.graded)))
                return 130
            found = None
            if not args.no_similarity:
                try:
                    found = similarity.analyse(book.current(), grading.sources, pristine_stubs(course),
                                               args.similarity_threshold)
                except Exception as exc:  # noqa: BLE001 - evidence is extra: the grades and reports go on
                    console.print("[yellow]" + _("similarity") + "[/]: " + _(
                        "not computed ({kind}: {error})", kind=type(exc).__name__, error=exc), highlight=False)
            written = publish(book, out, course, gradescope_files(args, "gradescope" in (args.format or [])), found,
                              reuse=not args.no_similarity, graded=grading.tally.graded,
                              lang=args.lang)
            current = settled(book, course)
    finally:
        runner.close()
    _summary(grading.tally, current, written, out, time.perf_counter() - started)
    if found is not None:
        code = sum(d["flagged"] for d in found["code"].values())
        acts = sum(1 for d in found["behaviour"].values() for p in d["pairs"] if p["shared"] >= 2)
        print(_("similarity: {code} code pair(s) and {acts} behaviour pair(s) flagged for a look "
                "({seconds} s; evidence, never a penalty: see class.html#similarity)", code=code, acts=acts,
                seconds=f"{found['seconds']:.1f}"))
        skipped = similarity_view.skipped_lines(found)
        if skipped:
            print(_("similarity: {count} file(s) not compared, for their size (listed in class.html#similarity):",
                    count=len(skipped)))
            for line in skipped:
                print(f"  {line}")
    return EXIT_GRADER_FAILED if grading.tally.failed else EXIT_OK


def settled(book: Gradebook, course: Path) -> dict[str, Results]:
    """The gradebook's current results, in a term with each student's term grade (as
    ``publish`` settled it: nothing changed since, so nothing is recorded again)."""
    current = book.current()
    term.settle(book, course, current)
    return current


def pristine_stubs(course: Path) -> dict[str, str]:
    """Drill id -> its stub as handed out (what a submission's similarity leaves out)."""
    stubs = {}
    for drill in exercise_tests(course):
        path = course / "exercises" / f"{drill}.py"
        try:
            stubs[drill] = stub_source(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
    return stubs


@contextmanager
def _open_gradebook(out: Path) -> Iterator[Gradebook]:
    with Gradebook.open(ClassLayout(out).gradebook) as book:
        yield book


def _summary(tally: Tally, current: Mapping[str, Results], written: dict[str, Path],
             out: Path, seconds: float) -> None:
    graded = len(tally.graded)
    counts = {"graded": graded, "seconds": f"{seconds:.1f}", "skipped": len(tally.skipped),
              "problems": len(tally.problems), "failed": len(tally.failed)}
    if graded and seconds:
        print(_("graded {graded} submission(s) in {seconds} s, {rate} per minute; skipped {skipped} already "
                "graded (--force grades them again); {problems} not a submission; {failed} could not be "
                "graded", rate=f"{graded / seconds * 60:.1f}", **counts))
    else:
        print(_("graded {graded} submission(s) in {seconds} s; skipped {skipped} already graded (--force "
                "grades them again); {problems} not a submission; {failed} could not be graded", **counts))
    for student, reason in sorted({**tally.problems, **tally.failed}.items()):
        print(f"  {student}: {reason.splitlines()[0]}")
    if tally.time_problems:
        print(_("{count} submission time(s) could not be read:", count=len(tally.time_problems)))
        for student, reason in sorted(tally.time_problems.items()):
            print(f"  {student}: {reason.splitlines()[0]}")
    if tally.lookalikes:
        print(_("{count} student id(s) look like another's (graded; check they are different students):",
                count=len(tally.lookalikes)))
        for _student, note in sorted(tally.lookalikes.items()):
            print(f"  {note}")
    if current:
        print(class_line(current))
    print(_("gradebook: {path}", path=ClassLayout(out).gradebook))
    for what, path in written.items():
        print(written_line(what, path))


def class_line(current: Mapping[str, Results]) -> str:
    """The class's median, as the class report's: in a term the final points (the grade),
    with the raw points graded beside them; otherwise the points graded."""
    top = next(iter(current.values()))["max_score"]
    raw = statistics.median(r["score"] for r in current.values())
    if not any(r.get("term") for r in current.values()):
        return _("class: {count} student(s), median {median} of {top}", count=len(current),
                 median=present.number(raw), top=present.number(top))
    final = statistics.median(r["term"]["final"] if r.get("term") else r["score"] for r in current.values())
    return _("class: {count} student(s), median final grade {median} of {top} (raw points graded: median {raw})",
             count=len(current), median=present.number(final), top=present.number(top),
             raw=present.number(raw))


# What ``publishing.publish`` wrote, in the words of its printed line.
WRITTEN = {"class report": N_("class report"), "grades": N_("grades"), "similarity": N_("similarity"),
           "gradescope": N_("gradescope")}


def written_line(what: str, path: object) -> str:
    """``class report: DIR/class.html``: one file ``publish`` wrote."""
    return _("{what}: {path}", what=_(WRITTEN[what]) if what in WRITTEN else what, path=path)


def cmd_merge(args: argparse.Namespace) -> int:
    """Fold results from another runner (a CUDA runner's) into the gradebook."""
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    out = Path(args.out).resolve()
    gradebook.existing(ClassLayout(out).gradebook)
    if args.student and len(args.results) != 1:
        raise UsageError(_("--student names the student of one RESULTS_JSON; give one file"))
    with _open_gradebook(out) as book:
        known = set(book.students())
        for path in map(Path, args.results):
            try:
                incoming = results_json.read(path)
            except (OSError, ValueError) as exc:
                print(_("{path}: skipped: cannot read it ({error})", path=path, error=exc))
                continue
            student = args.student or Path(str(incoming.get("submission") or "")).name
            if student not in known:
                print(_("{path}: skipped: no student {student} in the gradebook (give --student ID)",
                        path=path, student=repr(student)))
                continue
            try:
                merged = book.merge(student, incoming)
            except GradebookError as exc:
                print(_("{path}: skipped: {error}", path=path, error=exc))
                continue
            print(_("{student}: {replaced} test(s) now have a real outcome, {conflicts} conflict(s) kept as "
                    "they were, {unknown} unknown test(s)", student=student, replaced=merged.replaced,
                    conflicts=len(merged.conflicts), unknown=len(merged.unknown)))
            if merged.replaced and merged.submission is not None:
                write_student(out, course, student, book.results_of(merged.submission),
                              args.lang)
        written = publish(book, out, course, gradescope_files(args, "gradescope" in (args.format or [])),
                          lang=args.lang)
    for what, where in written.items():
        print(written_line(what, where))
    return EXIT_OK
