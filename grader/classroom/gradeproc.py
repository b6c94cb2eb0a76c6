"""A grading process: a long-lived interpreter that grades one submission after another.

``grade-all`` needs hundreds of gradings. Starting a grader for each would pay
torch's import, pytest's start and the sandbox zygote's start (together more
than a stub's whole grading) every time. A grading process pays them once:
it reads a job (``grader.classroom.jobs.GradingJob``, one JSON line on stdin),
grades it with the same ``grader.grading.pipeline.grade`` as ``torchdrill grade``,
and answers one JSON line (``GradingAnswer``) on its protocol channel.

Student code never runs in this process except under ``--isolation none``, where
the client restarts the process after every job, so nothing one submission did
to the interpreter can reach the next. Between jobs the course's test modules are
dropped from ``sys.modules``, so every submission is graded by freshly imported
tests.

``grade_job`` is the one entry point for both schedulers: the local pool calls it
in its threads, and a Dask worker calls it as a task. Each calling thread keeps
its own grading process (``_local``).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from grader.classroom.jobs import GradingAnswer, GradingJob
from grader.core.errors import GraderFailed
from grader.core.files import remove_tree
from grader.core.isolation import Isolation
from grader.sandbox import confine, launch

if TYPE_CHECKING:
    import pytest

STDERR_TAIL = 4000  # characters of a dead grading process's stderr kept for the message


class GradingCrashed(GraderFailed, RuntimeError):
    """The grading process died or answered nonsense during a job (not the student's fault
    as far as the grader can tell: a sandboxed submission cannot kill it)."""


# ------------------------------------------------------------------ the client side

class GradingProcess:
    """A grading process as seen by its caller: ``grade(job)`` returns the answer."""

    def __init__(self, slot: int = 0) -> None:
        """``slot``: this grading process's place in the pool; its workers run as a uid
        of their own (``confine.POOL_BASE + slot``), so no two classmates graded at once
        share a process quota or can signal each other's workers."""
        self.slot = slot
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr: deque[str] = deque(maxlen=200)
        self.jobs = 0

    def _start(self) -> None:
        # -I and this grader package: not whatever the current folder or site-packages hold.
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
               confine.UID_ENV: str(confine.POOL_BASE + self.slot)}
        self.proc = subprocess.Popen(
            launch.command("classroom.gradeproc"), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, close_fds=True)
        self._stderr.clear()
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()

    def _drain(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self._stderr.append(line.decode(errors="replace"))

    def grade(self, job: GradingJob, fresh: bool = False) -> GradingAnswer:
        """Grade ``job`` (see ``serve``); ``fresh``: in a new process, closed after."""
        if fresh or self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(job.to_json()).encode() + b"\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = b""
        if not line:
            self.proc.wait()
            code = self.proc.returncode
            _remove_work(self.proc.pid)  # it had no chance to
            self.proc = None
            tail = "".join(self._stderr)[-STDERR_TAIL:]
            raise GradingCrashed(f"the grading process died (exit {_exit_text(code)}) while "
                                 f"grading {job.student}; its last output:\n{tail}")
        self.jobs += 1
        try:
            answer = GradingAnswer.from_json(json.loads(line))
        except ValueError:
            self.close()
            raise GradingCrashed(f"the grading process answered nonsense: {line[:200]!r}") from None
        if fresh:
            self.close()
        return answer

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()  # it exits at the end of its input
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return str(code)


_local = threading.local()
_all: list[GradingProcess] = []
_all_lock = threading.Lock()
_closing = threading.Event()  # set by close_all: no grading process starts after it


def grade_job(job: GradingJob) -> GradingAnswer:
    """Grade one job in this thread's grading process (started on first use).

    A grading process that dies is replaced and the job tried once more, then
    reported as the answer's error.
    """
    if _closing.is_set():
        return GradingAnswer(error="grading was stopped before this submission's turn")
    process = getattr(_local, "process", None)
    if process is None:
        with _all_lock:
            process = _local.process = GradingProcess(slot=len(_all))
            _all.append(process)
    fresh = job.isolation is Isolation.NONE  # student code ran in it: never reuse it
    started = time.perf_counter()
    try:
        try:
            answer = process.grade(job, fresh=fresh)
        except GradingCrashed:
            if _closing.is_set():
                raise
            answer = process.grade(job, fresh=fresh)  # a new process, once
    except GradingCrashed as exc:
        answer = GradingAnswer(error=str(exc))
    answer.wall_s = round(time.perf_counter() - started, 4)  # as the caller saw it
    answer.worker = f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}"
    return answer


def accept_jobs() -> None:
    """Let ``grade_job`` start grading processes again (after a ``close_all``)."""
    _closing.clear()


def close_all() -> None:
    """Stop every grading process this process started, letting each finish its job
    and clean up. Call it before the threads that started them end: a grading process
    dies with the thread that started it (``_die_with_parent``)."""
    _closing.set()
    with _all_lock:
        while _all:
            _all.pop().close()


WORK_PREFIX = "torchdrill-grading-"


def remove_stale() -> None:
    """Remove the work folders of grading processes that are gone (a killed run
    leaves them: ``kill -9`` lets nothing clean up). A folder is named after its
    process id, and only a dead process's folder is removed."""
    for folder in Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}*-*"):
        pid = folder.name.removeprefix(WORK_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove_tree(folder)


def _remove_work(pid: int) -> None:
    for folder in Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}{pid}-*"):
        remove_tree(folder)


# ------------------------------------------------------------------ the process

class _TestTime:
    """A pytest plugin summing the time spent in test bodies (setup, call, teardown)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds += report.duration


def serve(job: GradingJob, work: Path) -> GradingAnswer:
    """Grade one job with the one pipeline (``grader.grading.pipeline.grade``): its
    files laid out under ``work``, shown as ``<student>/...`` in the results, so
    messages and tracebacks are the same on every machine and every run."""
    from grader.grading.pipeline import grade
    from grader.intake.archives import unpacked
    from grader.intake.submission import from_files

    if not job.allow_degraded:  # asked on the machine that grades (a cluster's too)
        refused = confine.refuse_degraded(job.isolation, job.sandbox_off)
        if refused:
            return GradingAnswer(error=f"{socket.gethostname()}: {refused}")
    course = Path(job.course)
    submission = from_files(job.student, unpacked(job.files), job.kind, job.notebook)
    timer = _TestTime()
    try:
        results = grade(job.request(course), submission, plugins=[timer], work=work,
                        after=lambda folder: _forget_modules(course / "tests", folder))
    except GraderFailed as exc:
        return GradingAnswer(error=exc.sentence())
    return GradingAnswer(results=results, tests_s=round(timer.seconds, 4))


def _forget_modules(*folders: Path) -> None:
    """Drop modules loaded from ``folders`` (the course's tests, the submission), so
    the next job imports its tests afresh and sees nothing this one left."""
    roots = [str(f.resolve()) + os.sep for f in folders]
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if any(path.startswith(root) for root in roots):
            del sys.modules[name]


def _die_with_parent() -> None:
    """Exit when the process that started us goes (a killed ``grade-all`` leaves no
    grading process behind to compete with its rerun)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def main() -> None:
    _die_with_parent()
    # The protocol gets its own copy of stdout; fd 1 then goes to stderr, so nothing
    # printed while grading (pytest, torch warnings, in-process student code) can
    # be mistaken for an answer.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from grader.grading.pipeline import freeze_heavy_imports

    freeze_heavy_imports()
    work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))
    os.chmod(work, 0o755)  # the sandbox's folders inside must stay reachable for uid 65534
    tempfile.tempdir = str(work)  # the sandbox's zygote and copies live here too
    try:
        for line in sys.stdin:
            try:
                answer = serve(GradingJob.from_json(json.loads(line)), work)
            except Exception as exc:  # noqa: BLE001 - a bad job must not end the process
                answer = GradingAnswer(error=f"{type(exc).__name__}: {exc}")
            channel.write(json.dumps(answer.to_json()) + "\n")
            channel.flush()
    finally:
        sandboxes = sys.modules.get("grader.sandbox.sandboxes")
        if sandboxes is not None:
            sandboxes.close_zygotes()  # their folders are inside ``work``
        remove_tree(work)


if __name__ == "__main__":
    main()
