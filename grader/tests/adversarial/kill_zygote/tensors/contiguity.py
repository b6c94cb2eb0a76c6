"""Attack: kill the process that made this worker (the zygote), its process
group, and the grader that grades this submission if it can be found (a
process whose command line names the submission folder, templated in at test
time: other gradings on the machine are left alone), with SIGKILL. Later exercises of the submission still need
workers. Raises with what each kill did.
"""

import glob
import os
import signal

SUBMISSION = "@@SUBMISSION@@"
notes = []


def _kill(what, fn):
    try:
        fn()
        notes.append(f"{what}=KILLED")
    except BaseException as exc:  # noqa: BLE001
        notes.append(f"{what}=refused({type(exc).__name__})")


def _attack():
    ppid = os.getppid()
    notes.append(f"ppid={ppid}")
    if ppid > 1:
        _kill("parent", lambda: os.kill(ppid, signal.SIGKILL))
        _kill("parent-group", lambda: os.killpg(os.getpgid(ppid), signal.SIGKILL))
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        pid = int(cmdline.split("/")[2])
        if pid == os.getpid():
            continue
        try:
            with open(cmdline, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if SUBMISSION.encode() in argv and b"grade" in argv:
            _kill(f"grader-{pid}", lambda: os.kill(pid, signal.SIGKILL))


def is_contiguous(size, stride):
    _attack()
    raise RuntimeError("ATTACK kill_zygote: " + " ".join(notes))


def contiguous_strides(size):
    _attack()
    raise RuntimeError("ATTACK kill_zygote: " + " ".join(notes))
