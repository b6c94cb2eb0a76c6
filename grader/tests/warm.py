"""A warm interpreter for the engine's tests: ``python ARGS`` without paying Python's start.

Most of the engine's tests run a whole grading in a fresh interpreter
(``python -m grader grade ...``), and each paid seconds of CPU importing torch,
hypothesis, pytest and the grader before it graded anything: about fifty gradings,
on two cores. ``run(args)`` runs the same command in a child forked from a server
that imported those once (one server per test process, started on first use). The
child is what a fresh interpreter would be after those imports: nothing of a
course, a submission or a hypothesis run is loaded in the server, the child gets the
caller's environment and working folder, fd 0-2 of its own, and runs ``-m MODULE``
or ``-c CODE`` as ``python`` would, atexit handlers included (the sandbox's zygote
stops there).

The server also starts one warm sandbox zygote (``grader.sandbox.zygote``) and shares it
with its children as pytest-xdist's controller shares its own with the workers: a
sandboxed grading in a child attaches to it instead of paying torch's import (and
``torch._dynamo``'s) in a zygote of its own. A child whose confinement plan differs (a
layer forced off in its environment) starts its own, as does one whose shared zygote a
student killed: the product's own fallbacks, unchanged.

``TORCHDRILL_TESTS_FRESH=1`` runs every command in a fresh interpreter instead;
commands under a prefix (``unshare --user``, ``env X=1``) always do. The tests of
what only a fresh interpreter shows (``torchdrill grade`` starts its zygote before
it imports torch) run their own ``subprocess``.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

FRESH_ENV = "TORCHDRILL_TESTS_FRESH"
# set for the whole session (or a test's command): sandboxed gradings start zygotes of their own
NO_SHARED_ZYGOTE_ENV = "TORCHDRILL_TESTS_OWN_ZYGOTES"
# torch._dynamo: torch imports it lazily, on a checkpoint's or an optimizer's first use, and
# every in-process grading of those drills paid for it again.
WARM_IMPORTS = ("torch", "torch._dynamo", "hypothesis", "pytest", "rich", "jinja2",
                "grader.grading.pipeline", "grader.grading.session")


class _Server:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "grader.tests.warm"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        atexit.register(self.close)

    def run(self, args: Sequence[str], cwd: Path, timeout: float,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with tempfile.TemporaryDirectory(prefix="torchdrill-warm-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"args": list(args), "cwd": str(cwd), "env": dict(os.environ if env is None else env),
                       "stdout": str(out), "stderr": str(err)}
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            child = int(json.loads(self._line(60))["pid"])
            try:
                status = json.loads(self._line(timeout))["status"]
            except TimeoutError:
                os.killpg(child, signal.SIGKILL)
                self._line(60)
                raise subprocess.TimeoutExpired([sys.executable, *args], timeout,
                                                out.read_text(errors="replace"),
                                                err.read_text(errors="replace")) from None
            return subprocess.CompletedProcess([sys.executable, *args], int(status),
                                               out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def _line(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the warm interpreter exited ({self.proc.wait()})")
        return line

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_server: _Server | None = None


def run(args: Sequence[str], cwd: Path, timeout: float = 600, prefix: Sequence[str] = (),
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``[PREFIX] python ARGS`` in ``cwd`` (with ``env``, else this process's
    environment), output captured as text: in a child of the warm server, or a fresh
    interpreter under a prefix or with ``TORCHDRILL_TESTS_FRESH``."""
    global _server
    if prefix or os.environ.get(FRESH_ENV):
        return subprocess.run([*prefix, sys.executable, *args], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=None if env is None else dict(env))
    if _server is None or _server.proc.poll() is not None:
        _server = _Server()
    return _server.run(args, cwd, timeout, env)


# ------------------------------------------------------------------ the server's side

def _shared_zygote() -> tuple[object, dict] | None:
    """A warm zygote for the default sandbox plan, started now and shared with every
    child (None where it cannot be: the children start their own, as before)."""
    try:
        from grader.sandbox import confine, zygote
        started = zygote.Zygote(confine.plan("sandbox"), warm=True)
        shared = started.share()
    except Exception:  # noqa: BLE001 - no sandbox here: nothing to share
        return None
    return (started, shared) if shared is not None else None


def _child(request: dict, zygote_shared: tuple[object, dict] | None) -> None:
    """Become ``python ARGS`` (in the forked child); never returns."""
    code = 1
    try:
        os.setsid()  # its own group: a timeout kills it and whatever it started
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]  # as `python -m` and `python -c` put the working folder first
        os.environ.clear()
        os.environ.update(request["env"])
        if zygote_shared is not None:  # the server's zygote is the server's: only attach to it
            owner, shared = zygote_shared
            owner.control.close()  # type: ignore[attr-defined]
            if not os.environ.get(NO_SHARED_ZYGOTE_ENV):
                from grader.sandbox import zygote
                zygote.attach(shared)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        code = _as_python(list(request["args"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported as python reports it
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _as_python(args: list[str]) -> int:
    import runpy
    if args[:1] == ["-m"]:
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[:1] == ["-c"]:
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        raise SystemExit(f"warm interpreter: only -m MODULE and -c CODE run here, not {args[:1]}")
    return 0


def serve() -> None:
    import importlib
    zygote_shared = None if os.environ.get(NO_SHARED_ZYGOTE_ENV) else _shared_zygote()
    for name in WARM_IMPORTS:
        importlib.import_module(name)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, zygote_shared)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
    if zygote_shared is not None:
        zygote_shared[0].close()  # type: ignore[attr-defined]
    os._exit(0)


if __name__ == "__main__":
    serve()
