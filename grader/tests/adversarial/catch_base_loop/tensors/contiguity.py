"""Attack: a call that never returns and cannot be interrupted from inside.

It ignores SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGUSR1/2 and SIGXCPU where it
can, then spins forever, swallowing every ``BaseException`` (a ``TimedOut`` or
``KeyboardInterrupt`` raised into it included). Only a kill from outside ends it.
"""

import signal
import time


def _spin():
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGXCPU"):
        try:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        except BaseException:  # noqa: BLE001
            pass
    while True:
        try:
            while True:
                time.time()
        except BaseException:  # noqa: BLE001
            pass


def is_contiguous(size, stride):
    _spin()


def contiguous_strides(size):
    _spin()
