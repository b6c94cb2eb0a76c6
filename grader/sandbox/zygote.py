"""The sandbox's zygote: a clean interpreter that imported torch once and forks workers.

Kept apart from ``grader.sandbox.sandboxes`` so it imports neither torch nor the grader's
tests: ``torchdrill grade`` starts the zygote before the grader imports torch
itself, and the two imports overlap. Started at pytest's session start instead,
the first worker would wait for the whole of the zygote's imports, the largest
single cost of a sandboxed grading; started early, it waits for little of them.

One zygote per confinement plan and process (``zygote_for``), started on first use
and kept until the process exits: ``grade-all``'s grading processes grade many
submissions with one. What runs inside is ``grader.sandbox.zygote_loop``.

pytest-xdist's workers share their controller's zygote (``Zygote.share``, ``attach``):
with ``-n 2`` a zygote of their own each would pay torch's import twice, on a
machine that the two workers keep busy. A worker that loses the shared zygote
(a student who killed it, in a degraded sandbox) starts one of its own.

A *warm* zygote also imports the parts of torch that torch loads lazily and that
cost a worker most (``grader.sandbox.zygote_loop.WARM_IMPORTS``: ``torch._dynamo``,
the dearest, which building the first optimizer imports). A grading of many drills
(``warm_for``) starts its zygote warm, while the grader imports torch itself; any
other zygote warms up the first time an optimizer is about to cross the wire
(``SandboxedImplementation``), before the worker that gets it is forked, so it
pays once, and nothing in a grading (or a class) with no optimizer in it.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from grader.core.errors import GraderFailed
from grader.core.files import remove_tree
from grader.sandbox import confine, launch

START_TIMEOUT_S = 60.0  # the zygote imports torch once: seconds, more on a busy machine
FEW_DRILLS = 4  # a grading of at most this many drills starts its zygote cold


class SandboxError(GraderFailed, RuntimeError):
    """The sandbox itself could not be set up (not the student's fault)."""


class SandboxBroken(BaseException):
    """The sandbox stopped working during grading, and not through the student's code
    (a new zygote could not fork a worker): grading stops with the grader's error.

    A ``BaseException``, like ``KeyboardInterrupt``: hypothesis and a test's own
    ``except Exception`` let it through, so it is never scored as a failed property.
    """


class Zygote:
    """A clean interpreter that imported torch once and forks confined workers.

    It holds no submission: every fork request names the submission copy and the
    private tmp its worker may see, so one zygote serves every submission this
    process grades (``grade-all`` grades many in one process; the zygote's start,
    torch's import, is paid once). Its root folder, the only folder bubblewrap
    binds read-write, holds one sub-folder per submission being graded.
    """

    def __init__(self, plan: confine.Plan, warm: bool = False, shared: dict[str, Any] | None = None):
        """``shared``: attach to the zygote another process shares (``share``'s answer)
        instead of starting one."""
        self.plan = plan
        self.warm = warm
        self._lock = threading.Lock()
        self._broken = False  # an exchange was cut short: restart before the next
        self.restarts = 0
        self.generation = 0  # bumped by each restart: workers of older ones are gone
        self.proc: subprocess.Popen[bytes] | None = None  # None: attached to a shared one
        self._log: Any = None
        self._shared: dict[str, Any] | None = None  # what ``share`` handed out
        self._unread = False  # the answer to a request nobody waited for is still to be read
        self._attached_with: dict[str, Any] | None = shared
        if shared is not None:
            self.tmp, self._owns_tmp = Path(shared["tmp"]), False
            self._attach(shared)
        else:
            self.tmp, self._owns_tmp = Path(tempfile.mkdtemp(prefix="torchdrill-sandbox-")), True
            os.chmod(self.tmp, 0o755)
            self._start()

    @property
    def attached(self) -> bool:
        """Served by a zygote another process started and shares."""
        return self.proc is None

    def running(self) -> bool:
        """Whether this zygote can still serve (an attached one: as far as we know; an
        exchange with one that is gone raises ``SandboxError``)."""
        return self.proc is None or self.proc.poll() is None

    def usage(self, wait: bool = True) -> tuple[float, float | None] | None:
        """(CPU seconds, run-queue delay) of the workers forked for this process, ended and
        running ones, as the kernel counts them (``grader.sandbox.clock``; the delay is None
        where the kernel keeps none, or this zygote cannot say). None: (``wait`` false) it
        is in an exchange now, as when a clock's signal interrupts one."""
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            if self._broken and not wait:  # restarting it is no work for a clock's signal
                return None
            reply = self._exchange({"op": "usage"})
            delay = reply["delay"]
            return float(reply["cpu"]), None if delay is None else float(delay)
        except (SandboxError, KeyError, TypeError, ValueError):
            return 0.0, None
        finally:
            self._lock.release()

    def _attach(self, shared: dict[str, Any]) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(START_TIMEOUT_S)  # the answer waits for the zygote's imports
        try:
            sock.connect(str(shared["address"]))
        except OSError as exc:
            sock.close()
            raise SandboxError(f"cannot reach the shared zygote ({exc})") from None
        self.control = sock
        self._tell({"op": "hello", "key": str(shared["key"])})  # a wrong key: the next exchange fails

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv = launch.command("sandbox.zygote_loop") + (["warm"] if self.warm else [])
        # An attached zygote that had to start its own shares the folder: a log of its own.
        self._log = open(self.tmp / ("zygote.log" if self._owns_tmp else f"zygote-{os.getpid()}.log"), "wb")
        self.proc = subprocess.Popen(
            confine.zygote_command(self.plan, argv, self.tmp), stdin=theirs.fileno(), stdout=self._log,
            stderr=self._log, env=confine.scrubbed_env(), cwd=self.tmp, close_fds=True,
            start_new_session=True)
        theirs.close()
        self.control = ours
        self.control.settimeout(START_TIMEOUT_S)

    def exchange(self, request: dict[str, Any], fds: Sequence[int] = ()) -> dict[str, Any]:
        """One request to the zygote and its reply. An exchange cut short (the test's
        clock, Ctrl-C) leaves a reply in flight: the zygote is then restarted rather
        than letting a late reply answer the next request."""
        with self._lock:  # one exchange at a time (a rank run forks its workers from threads)
            return self._exchange(request, fds)

    def _exchange(self, request: dict[str, Any], fds: Sequence[int] = ()) -> dict[str, Any]:
        if self._broken:
            self.restart()
        self._broken = True
        try:
            if self._unread:  # one message in flight at a time, so none run together
                self.control.recv(1 << 16)
                self._unread = False
            socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            reply = self.control.recv(1 << 16)
        except OSError as exc:
            raise SandboxError(f"the sandbox's zygote is gone ({exc}); its log: "
                               f"{self.log()}") from None
        if not reply:
            raise SandboxError(f"the sandbox's zygote exited; its log: {self.log()}")
        self._broken = False
        return json.loads(reply)

    def share(self) -> dict[str, Any] | None:
        """Let other grading processes of this user use this zygote (pytest-xdist's
        workers): what ``Zygote(plan, warm, shared=...)`` needs to attach, or None where
        it cannot be shared. The zygote listens on a socket in a folder of its own, which
        only this user can enter and which no sandbox binds, and serves only a process
        that shows the key (it keeps only the key's digest: its workers could read it).
        Nothing waits for the zygote here (it takes the socket once its imports are done,
        and its answer is read before the next request)."""
        if self.attached:  # a sharer may pass the zygote on (to its own xdist workers)
            return self._attached_with
        if self._shared is not None:
            return self._shared
        try:
            folder = Path(tempfile.mkdtemp(prefix="torchdrill-zygote-"))  # 0700
        except OSError:  # no room for it: every worker starts its own zygote, as before
            return None
        address = folder / "socket"
        if len(os.fsencode(address)) >= 100:  # sun_path's limit, less a margin
            remove_tree(folder)
            return None
        key = secrets.token_hex(16)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(address))
            listener.listen(16)
            self._tell({"op": "share", "key": key_digest(key)}, [listener.fileno()])
        except OSError:
            remove_tree(folder)
            return None
        finally:
            listener.close()
        self._shared = {"address": str(address), "key": key, "tmp": str(self.tmp),
                        "plan": self.plan.to_json(), "warm": self.warm}
        return self._shared

    def _tell(self, request: dict[str, Any], fds: Sequence[int] = ()) -> None:
        """Send a request without waiting for the zygote (which may still be importing
        torch); ``exchange`` reads its answer before the next request."""
        with self._lock:
            socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            self._unread = True

    def warm_up(self) -> None:
        """Import ``WARM_IMPORTS`` in the zygote now, if it has not (its later workers
        inherit them)."""
        if not self.warm:
            self.exchange({"op": "warm"})
            self.warm = True

    def log(self) -> str:
        name = self._log.name if self._log is not None else self.tmp / "zygote.log"
        try:
            return Path(name).read_text(errors="replace")[-2000:].strip()
        except OSError:
            return "(none)"

    def restart(self) -> None:
        """A new zygote (the old one's workers die with it: PR_SET_PDEATHSIG). An
        attached one starts a zygote of its own (leaving the shared one, which kills
        the workers it forked for us)."""
        self._stop(kill=True)
        self.restarts += 1
        self.generation += 1
        self._broken = self._unread = False
        self._start()

    def _stop(self, kill: bool) -> None:
        self.control.close()  # the zygote exits when its owner's socket closes
        if self.proc is None:
            return
        try:
            if kill:
                self.proc.kill()
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def close(self) -> None:
        self._stop(kill=False)
        if self._log is not None and os.environ.get("TORCHDRILL_KEEP_SANDBOX_LOG"):
            shutil.copy(self._log.name, os.environ["TORCHDRILL_KEEP_SANDBOX_LOG"])
        if self._shared is not None:
            remove_tree(Path(self._shared["address"]).parent)
        if self._owns_tmp:
            remove_tree(self.tmp)


_zygotes: dict[str, Zygote] = {}


def warm_for(drills: int | None) -> bool:
    """Whether a zygote that serves ``drills`` drills (None: the whole course) is
    started warm (see the module docstring)."""
    return drills is None or drills > FEW_DRILLS


def zygote_for(plan: confine.Plan, warm: bool = False) -> Zygote:
    """This process's zygote for ``plan``, started on first use; it serves every
    submission graded here until the process exits. ``warm``: warm it up (now, if
    it was started cold)."""
    key = _key(plan)
    zygote = _zygotes.get(key)
    if zygote is None or not zygote.running():
        if zygote is not None:
            zygote.restart()
        else:
            zygote = _zygotes[key] = Zygote(plan, warm)
    if warm:
        zygote.warm_up()
    return zygote


def _key(plan: confine.Plan) -> str:
    return json.dumps(plan.to_json(), sort_keys=True)


def attach(shared: dict[str, Any]) -> None:
    """Serve this process's sandboxes of ``shared["plan"]`` from the zygote another
    process shares (``Zygote.share``: pytest-xdist's controller, for its workers). One
    that cannot be reached is left alone: ``zygote_for`` then starts one here."""
    plan = confine.Plan.from_json(shared["plan"])
    if _key(plan) in _zygotes:
        return
    try:
        _zygotes[_key(plan)] = Zygote(plan, bool(shared.get("warm")), shared=shared)
    except (SandboxError, OSError, KeyError, TypeError):
        pass


def key_digest(key: str) -> str:
    """What the zygote keeps of a sharing key (its workers can read its memory)."""
    return hashlib.sha256(key.encode()).hexdigest()


def start_early(isolation: str, off: Collection[str] = (), warm: bool = False) -> Zygote | None:
    """Start the zygote a grading with ``isolation`` will ask for, now (or find the one
    started already), and return it. A zygote that cannot start is left for the grading
    to report, where the plugin asks again: None, as for ``none``."""
    if isolation == "none":
        return None
    try:
        return zygote_for(confine.plan(isolation, off), warm)
    except (SandboxError, OSError, ValueError):
        return None


def workers_usage(wait: bool = True) -> tuple[float, float | None] | None:
    """(CPU seconds, run-queue delay) of every worker this process's zygotes forked for it
    (what a drill budget charges: ``grader.sandbox.clock``). None when ``wait`` is false
    and a zygote is in an exchange now."""
    cpu = 0.0
    delay: float | None = 0.0
    for z in list(_zygotes.values()):
        if not z.running():
            continue
        used = z.usage(wait)
        if used is None:
            return None
        cpu += used[0]
        delay = None if delay is None or used[1] is None else delay + used[1]
    return cpu, delay


def close_zygotes() -> None:
    """Stop this process's zygotes (at exit; their workers die with them)."""
    while _zygotes:
        _, zygote = _zygotes.popitem()
        zygote.close()


atexit.register(close_zygotes)
