"""The time a grading charges to a submission's drill budget.

A budget charges what the submission does with its time: running, and waiting of its own
accord (``time.sleep``, a blocking read). It leaves out only the time spent waiting for
a CPU, which is what a loaded machine adds. Linux counts that wait for every thread, as
the second field of ``/proc/<pid>/task/<tid>/schedstat`` (the run-queue delay, in ns).

So the charge of a stretch of grading is its wall time less the run-queue delay of the
threads that carry it: the grading process's main thread and each sandbox worker's main
thread (the one a submission's call runs on). Threads a submission starts for itself do
not lessen the charge; what they run is charged by the floor: the charge is never less
than the CPU time the grader and its workers used (all their threads), as ranks that
run side by side use more CPU than wall time.

Where the kernel keeps no run-queue delay (no ``schedstat``), the charge is the CPU time
alone and a sleeping submission is stopped by the wall allowance instead
(``grader.grading.budgets.WALL_ALLOWANCE``).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_THREAD_SELF = Path("/proc/thread-self/schedstat")


def run_delay(path: str | Path) -> float | None:
    """The run-queue delay in seconds that a ``schedstat`` file records (None: unreadable)."""
    try:
        with open(path, "rb") as f:
            return int(f.read(256).split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def thread_delay(pid: int, tid: int | None = None) -> float | None:
    """The run-queue delay of thread ``tid`` of process ``pid`` (default: its main thread)."""
    return run_delay(f"/proc/{pid}/task/{tid or pid}/schedstat")


AVAILABLE = run_delay(_THREAD_SELF) is not None


def main_thread_delay() -> float | None:
    """This process's main thread's run-queue delay, from any of its threads. On the main
    thread itself it is read from ``/proc/thread-self``: in a child forked from another
    thread, ``threading`` may still hold the parent's thread id for it."""
    if threading.current_thread() is threading.main_thread():
        return run_delay(_THREAD_SELF)
    main = threading.main_thread().native_id
    return thread_delay(os.getpid(), main) if main is not None else None


@dataclass(frozen=True)
class Reading:
    """Where the clocks stood at one moment: wall (monotonic), CPU of the grader and its
    workers, and the run-queue delay of the threads that carry the grading (None where
    the kernel does not keep it)."""

    wall: float
    cpu: float
    delay: float | None

    def charged_since(self, start: Reading) -> float:
        """Seconds to charge for the stretch from ``start`` to this reading."""
        cpu = max(self.cpu - start.cpu, 0.0)
        if self.delay is None or start.delay is None:
            return cpu
        return max(self.wall - start.wall - max(self.delay - start.delay, 0.0), cpu)


def reading(workers_cpu: float = 0.0, workers_delay: float | None = 0.0) -> Reading:
    """Now, for this process plus the workers' figures (their zygote's word, read from the
    kernel: ``grader.sandbox.zygote.workers_usage``)."""
    own = main_thread_delay() if AVAILABLE else None
    delay = None if own is None or workers_delay is None else own + workers_delay
    return Reading(time.monotonic(), time.process_time() + workers_cpu, delay)
