"""Where ``grade-all``'s jobs run: a ``Job`` (one student's submission and how to grade
it) goes to a ``Runner``: ``LocalRunner``, a pool of grading processes on this
machine (``grader.classroom.gradeproc``), or ``DaskRunner``, tasks on a Dask cluster
(``--scheduler``), where a ``cuda`` part goes to the workers with a ``GPU`` resource.
The coordinator (``grader.classroom.classgrade``) only submits jobs and reads answers.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from grader.classroom import gradeproc
from grader.classroom.jobs import GradingJob, Part
from grader.core.errors import UsageError
from grader.core.results_json import Results


@dataclass
class Job:
    """One grading task: a student's submission and how to grade it."""

    student: str
    content_hash: str
    task: GradingJob  # what gradeproc.grade_job gets
    attempted: int = 0  # drills whose file is not the stub: the dearest go first
    earlier: Results | None = None  # this content's results already recorded (--only)


class Runner(Protocol):
    """Where jobs run: ``submit`` returns a future whose result is the job's answer."""

    def submit(self, job: Job) -> Any: ...
    def completed(self, futures: list[Any]) -> Iterator[Any]: ...
    def has_gpu_workers(self) -> bool: ...


class LocalRunner:
    """``--workers N`` grading processes on this machine, driven by N threads."""

    def __init__(self, workers: int):
        gradeproc.accept_jobs()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers,
                                                          thread_name_prefix="grading")

    def submit(self, job: Job) -> concurrent.futures.Future:
        return self.pool.submit(gradeproc.grade_job, job.task)

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        return concurrent.futures.as_completed(futures)

    def has_gpu_workers(self) -> bool:
        return False  # one grading runs every test; cuda ones run where CUDA is

    def close(self) -> None:
        gradeproc.close_all()  # first: a grading process dies with its thread
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskRunner:
    """Tasks on a Dask distributed cluster (``--scheduler ADDRESS``)."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - a dependency
            raise UsageError(f"--scheduler needs dask.distributed ({exc})") from None
        try:
            self.client = Client(address, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None

    def submit(self, job: Job) -> Any:
        gpu = job.task.part is Part.CUDA
        return self.client.submit(gradeproc.grade_job, job.task, resources={"GPU": 1} if gpu else None,
                                  pure=False, key=f"grade-{job.student}-{job.task.part}-{os.urandom(4).hex()}")

    def completed(self, futures: list[Any]) -> Iterator[Any]:
        from distributed import as_completed
        return iter(as_completed(futures))

    def has_gpu_workers(self) -> bool:
        workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
        return any((w.get("resources") or {}).get("GPU") for w in workers.values())

    def close(self) -> None:
        self.client.close()
