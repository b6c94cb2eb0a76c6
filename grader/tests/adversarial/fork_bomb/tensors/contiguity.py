"""Attack: a (bounded) fork bomb and every way to start a program.

``os.fork`` in a loop (each child forks too, up to a small bound, then sleeps and
exits: enough to prove forking works without harming the machine if it does),
``subprocess.Popen``, ``os.system``, ``os.posix_spawn``, ``os.execv`` (in a
fork, never in the worker) and ``multiprocessing``. Raises with how many of
each succeeded.
"""

import os
import time

counts = {}


def _count(what, ok):
    counts[what] = counts.get(what, 0) + (1 if ok else 0)


def _forks(depth=0):
    for _ in range(8):
        try:
            pid = os.fork()
        except BaseException as exc:  # noqa: BLE001
            counts.setdefault("fork-error", type(exc).__name__)
            _count("fork", False)
            return
        if pid == 0:  # a child: fork a little more, then go away without returning
            try:
                if depth < 1:
                    _forks(depth + 1)
                time.sleep(2)
            finally:
                os._exit(0)
        _count("fork", True)


def _attempt(what, fn):
    try:
        fn()
        _count(what, True)
    except BaseException as exc:  # noqa: BLE001
        _count(what, False)
        counts.setdefault(f"{what}-error", type(exc).__name__)


def _popen():
    import subprocess

    subprocess.Popen(["/bin/sh", "-c", "sleep 2"])


def _system():
    if os.system("true") != 0:
        raise OSError("os.system failed")


def _spawn():
    os.posix_spawn("/bin/sleep", ["sleep", "2"], {})


def _multiprocessing():
    import multiprocessing

    process = multiprocessing.get_context("fork").Process(target=time.sleep, args=(2,))
    process.start()


def _attack():
    counts.clear()
    _forks()
    _attempt("popen", _popen)
    _attempt("system", _system)
    _attempt("posix_spawn", _spawn)
    _attempt("multiprocessing", _multiprocessing)
    started = sum(v for k, v in counts.items() if isinstance(v, int))
    summary = " ".join(f"{k}={v}" for k, v in counts.items())
    raise RuntimeError(f"ATTACK fork_bomb: STARTED={started} {summary}")


def is_contiguous(size, stride):
    _attack()


def contiguous_strides(size):
    _attack()
