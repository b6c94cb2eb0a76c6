"""A grader and its worker on one CPU while they take turns: the grader keeps its
thread on its CPU for the length of one request (``staying_on_this_cpu``, in the
grader), and the worker moves to the CPU each request names (``follow_cpu``, in the
worker). Both halves are here so that one reads why each exists.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def _cpu_reader() -> Callable[[], int | None]:
    """libc's ``sched_getcpu``: the CPU the calling thread runs on (None without one)."""
    try:
        getcpu = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return lambda: None
    getcpu.restype = ctypes.c_int
    return lambda: (cpu if (cpu := getcpu()) >= 0 else None)


current_cpu = _cpu_reader()


@contextmanager
def staying_on_this_cpu() -> Iterator[int | None]:
    """Keep the calling thread on its CPU while it waits for its worker; yield the CPU.

    The worker moves to that CPU (``follow_cpu``), so both wake-ups
    of a request happen on the CPU that just went idle. Unpinned, the scheduler
    wakes the waiting grader on the other, idle CPU and the pair chases each other,
    and that cross-CPU wake-up is the dearest part of a small call's round trip; the
    worker following alone recovers only part of it. The pin is lifted
    after every request, so nothing stops the scheduler from moving the grader.
    """
    cpu = current_cpu()
    try:
        allowed = os.sched_getaffinity(0) if cpu is not None else None
        if allowed is not None and cpu is not None:
            os.sched_setaffinity(0, {cpu})
    except (OSError, AttributeError):  # no affinity here (not Linux): nothing to keep
        allowed = cpu = None
    try:
        yield cpu
    finally:
        if allowed is not None:
            os.sched_setaffinity(0, allowed)


def follow_cpu(cpu: Any, current: int | bool | None) -> int | bool | None:
    """Run on ``cpu``, the grader's CPU when it sent the request; return what is followed.

    The grader waits while its worker runs and the worker waits while the grader
    runs, so sharing one CPU costs no parallelism, and a wake-up on the CPU that
    just went idle is the cheap kind: it avoids a cross-CPU wake-up, the dearest part
    of a small call's round trip. The grader stays on
    its CPU only while it waits (``staying_on_this_cpu``): when the scheduler moves it
    between requests, the worker follows at the next one. Gloo ranks send no CPU
    and stay free to run side by side.
    """
    if type(cpu) is not int or cpu == current or current is False:
        return current
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:  # a CPU outside this worker's set: stay where the scheduler puts it
        return False
    return cpu
