"""A warm process behind the learner's loop: ``check`` without paying Python's start.

Most of a cold ``torchdrill check`` is importing torch, hypothesis and pytest. The first
``check`` (or ``watch``) starts, in the background, a server that has imported them and
nothing of a course or a submission; a later ``check`` sends it its command line, its
working folder, its environment and its terminal (file descriptors 0-2, passed over the
socket), and the server forks a child that runs the command as ``torchdrill`` would, in
that folder, writing straight to that terminal. Each grading starts clean: the child
imports the learner's files and the course's tests itself, and ends with the command.

The server never grades stale code and never stays behind:

- it answers only its own user, and a client talks only to its own user's server (the
  socket's folder must be theirs alone, no link, and each side checks the other's uid),
  and only a client of the same interpreter and engine (the socket's name is a digest
  of both);
- before every request it compares the engine's source files (paths, sizes, times)
  with what it imported; when they differ it says so and ends, and the client runs
  the command itself and starts a fresh server;
- it ends after ``IDLE_S`` seconds without a request.

``TORCHDRILL_WARM=0`` turns it off (a command then always runs in its own process);
``TORCHDRILL_WARM_IDLE`` sets the idle time. Ctrl-C in the client is passed on to the
child, which stops as a cold ``check`` does.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import selectors
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import cast

import grader

ENV = "TORCHDRILL_WARM"
IDLE_ENV = "TORCHDRILL_WARM_IDLE"
IDLE_S = 600.0
CONNECT_TIMEOUT_S = 2.0
# What a child would import first anyway; nothing of a course, a submission or a run.
WARM_IMPORTS = ("torch", "hypothesis", "hypothesis.extra.numpy", "pytest", "rich", "jinja2",
                "grader.grading.pipeline", "grader.grading.session", "grader.grading.plugin",
                "grader.sandbox.armor", "grader.testing",
                # the plugins pytest loads for every run, its own and the installed ones
                "_hypothesis_pytestplugin", "anyio.pytest_plugin", "xdist.plugin", "xdist.looponfail",
                *(f"_pytest.{name}" for name in ("faulthandler", "helpconfig", "junitxml", "pastebin", "setuponly",
                                                 "setupplan", "skipping", "threadexception", "tracemalloc",
                                                 "unittest", "unraisableexception", "warnings")))
_ENGINE = Path(grader.__file__).resolve().parent


def enabled(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    return environ.get(ENV, "1") not in ("0", "", "no", "off")


def socket_path() -> Path:
    """Where this user's server for this interpreter and engine listens."""
    key = hashlib.sha256(f"{sys.executable}\0{_ENGINE}\0{grader.__version__}".encode()).hexdigest()[:16]
    base = Path(tempfile.gettempdir())
    if len(str(base)) > 60:  # a socket's path has at most 107 bytes
        base = Path("/tmp")
    return base / f"torchdrill-warm-{os.getuid()}" / f"{key}.sock"


def engine_stamp() -> str:
    """A digest of the engine's source files (path, size, modification time)."""
    digest = hashlib.sha256()
    for path in sorted(_ENGINE.rglob("*.py")):
        if "tests" in path.relative_to(_ENGINE).parts:
            continue
        try:
            st = path.stat()
        except OSError:
            continue
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


# ------------------------------------------------------------------ the client's side

def served(argv: Sequence[str]) -> int | None:
    """Run ``torchdrill ARGV`` in the warm server's child and return its exit code;
    None when no server can serve it (the caller runs it, and ``start`` one after)."""
    if not enabled():
        return None
    path = socket_path()
    if not _ours(path.parent):
        return None  # a folder someone else made: its socket is not our server's
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(str(path))
        if _peer_uid(sock) != os.getuid():  # the environment and terminal go to our own server only
            sock.close()
            return None
        request = {"argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(sock, [json.dumps(request).encode()], [0, 1, 2])
        reply = _line(sock)
    except OSError:
        sock.close()
        return None
    if reply.get("pid") is None:  # stale: it has ended; this command runs cold
        sock.close()
        return None
    child = int(reply["pid"])
    sock.settimeout(None)
    try:
        while True:
            try:
                done = _line(sock)
                break
            except KeyboardInterrupt:  # the child stops as a cold check would, and says so
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGINT)
    except OSError:
        return 1
    finally:
        sock.close()
    return int(done.get("status", 1))


def _line(sock: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("the warm server closed the connection")
        data += chunk
    return dict(json.loads(data))


def start() -> None:
    """Start a server in the background, unless one runs or is starting (it holds its
    lock), or warm serving is off. Never waits for it."""
    if not enabled():
        return
    try:
        with _lock(block=False):
            pass
    except BlockingIOError:
        return  # one runs, or is importing torch
    except OSError:
        return  # no folder of our own to meet in: no server
    with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
        # from the engine's own folder: the working folder may hold another ``grader`` (a clone)
        subprocess.Popen([sys.executable, "-m", "grader.learner.warm"], stdin=null_in, stdout=null_out,
                         stderr=null_out, start_new_session=True, close_fds=True, cwd=_ENGINE.parent)


def _ours(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (no link) of this user's that no one else may enter."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder)


@contextlib.contextmanager
def _lock(block: bool) -> Iterator[None]:
    """The server's lock, beside its socket: held by the one server for its lifetime."""
    path = socket_path()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    if not _ours(path.parent):
        raise PermissionError(f"{path.parent} is not this user's alone")
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        yield
    finally:
        os.close(fd)


# ------------------------------------------------------------------ the server's side

def serve() -> None:
    """Listen until idle for ``IDLE_S`` or until the engine's files change."""
    try:
        with _lock(block=False):
            _listen(socket_path())
    except OSError:
        return  # another server runs, or no folder of our own to meet in


def _listen(path: Path) -> None:
    global _main
    stamp = engine_stamp()
    import importlib
    for name in WARM_IMPORTS:
        with contextlib.suppress(ImportError):  # a plugin this installation lacks
            importlib.import_module(name)
    _main = _command_line()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a server that ended without removing it (it held the lock; we do now)
    listener.bind(str(path))
    listener.listen(8)
    idle = float(os.environ.get(IDLE_ENV, IDLE_S))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle:
            _reap()
            if not selector.select(timeout=min(1.0, idle)):
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            if not _serve_one(conn, stamp):
                break
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # before the lock goes: no client meets a socket nobody serves
        listener.close()


def _serve_one(conn: socket.socket, stamp: str) -> bool:
    """Fork a child for one request; False when the server must end (stale code)."""
    with conn:
        if _peer_uid(conn) != os.getuid():
            return True
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            request = json.loads(message)
        except (OSError, ValueError):
            return True
        try:
            if len(fds) != 3 or engine_stamp() != stamp:
                conn.sendall(b'{"pid": null}\n')
                return len(fds) != 3
            pid = os.fork()
            if pid == 0:
                _child(conn, request, fds)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except OSError:
            pass
        finally:
            for fd in fds:
                os.close(fd)
    return True


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """Become ``torchdrill ARGV`` in the client's folder and terminal; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[ENV] = "0"  # served here: the command neither asks a server nor starts one
        sys.argv = ["torchdrill", *request["argv"]]
        code = _run(list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as the command would report it
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.sendall(json.dumps({"status": code}).encode() + b"\n")
        finally:
            os._exit(code)


_main: Callable[[list[str]], int] | None = None  # the command line's entry point, run once by the server


def _command_line() -> Callable[[list[str]], int]:
    """The command line's own entry point, run as ``python -m grader`` runs it (nothing
    imports ``grader.cli``): once in the server, so its children find it loaded."""
    import runpy
    return cast(Callable[[list[str]], int], runpy.run_module("grader.cli", run_name="grader.cli")["main"])


def _run(argv: list[str]) -> int:
    return int((_main or _command_line())(argv))


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    serve()
