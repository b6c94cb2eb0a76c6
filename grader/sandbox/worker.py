"""The untrusted side of the trust boundary: a worker, forked by the zygote
(``grader.sandbox.zygote_loop``) for one exercise of one submission.

It confines itself (``grader.sandbox.lockdown``), redirects its stdout/stderr into
capped captures, puts the armor on (``grader.sandbox.armor``) and the grader's modules
out of reach, and serves requests on the socket the grader handed over:

- ``call``: run one student function under the drill's guard;
- ``backward``: send gradients back through the graph of an earlier call;
- ``rank``: be one rank of a rank run, whose collectives (or sends and receives) the
  grader serves: every rank is a worker of its own;
- ``gloo``: be one real gloo rank.

Every answer is a ``grader.sandbox.wire`` message: plain data and raw tensor bytes.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
import traceback
import warnings
from collections import OrderedDict
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import torch

from grader.contract import effects, harness
from grader.contract.call import guarded_call
from grader.contract.forbid import Forbidden, ForbiddenUse
from grader.contract.impl import Implementation
from grader.core.i18n import Message
from grader.core.outcomes import NotAttempted, StudentError, SubmissionError, worded
from grader.sandbox import armor, confine, lockdown, wire
from grader.sandbox.channel import SEND_LOCK, Channel, RemoteBatchSizes, RemoteCollective, RemotePointToPoint, send_answer
from grader.sandbox.decoding import Decoder
from grader.sandbox.encoding import Encoder
from grader.sandbox.pinning import follow_cpu

MAX_OUTPUT_BYTES = 64 * 1024  # student stdout/stderr kept per request
KEPT_GRAPHS = 16  # calls whose autograd graph a later ``backward`` may use


class _Captured:
    """fd 1 or 2 redirected into an anonymous file, read back and emptied per request.

    The file is an unnamed one in the worker's folder (the noexec scratch, in bubblewrap):
    a memfd would be a file the worker writes that could be mapped as code, and seccomp
    refuses memfds (``grader.sandbox.confine``)."""

    def __init__(self, fd: int):
        self.fd = fd
        try:
            self.file = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
        except OSError:  # a file system without O_TMPFILE (outside bubblewrap)
            self.file = os.memfd_create(f"captured-{fd}")
        os.dup2(self.file, fd)

    def take(self) -> str:
        size = os.fstat(self.file).st_size
        if not size:  # the usual case: one system call
            return ""
        os.lseek(self.file, 0, os.SEEK_SET)
        data = os.read(self.file, min(size, MAX_OUTPUT_BYTES))
        os.ftruncate(self.file, 0)
        os.lseek(self.file, 0, os.SEEK_SET)
        text = data.decode("utf-8", "replace")
        if size > MAX_OUTPUT_BYTES:
            text += f"\n... ({size - MAX_OUTPUT_BYTES} more bytes not kept)"
        return text


class Worker:
    """Serves one exercise of one submission (or one gloo rank) on ``sock``."""

    def __init__(self, sock: socket.socket, request: dict[str, Any]):
        self.sock = sock
        self.copy_root = Path(request["copy"])
        self.shown_root = request["submission"]
        self.impl = Implementation(self.copy_root, request["exercise"],
                                   Forbidden(dict(request.get("forbid") or {})),
                                   guard_arguments=False)  # the grader decides what it writes back
        self.graphs: OrderedDict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = OrderedDict()
        self.calls = 0
        self.captured = (_Captured(1), _Captured(2))
        self.cpu: int | bool | None = None  # the CPU followed; False: moving is refused here
        self.function = "the submission"  # what the current request runs, for messages
        # What ``refused`` needs, taken now: the submission cannot swap them later.
        self._send, self._exit, self._use = send_answer, os._exit, ForbiddenUse

    def refused(self, name: str, hint: str) -> None:
        """A forbidden API was used (``grader.sandbox.armor``): tell the grader, and end
        this worker before the submission's code can run again."""
        said = self._use(name, hint).message(self.function)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            out, err = (c.take() for c in self.captured)
            with SEND_LOCK:
                self._send(self.sock, {"raise": {"kind": "assertion", "message": str(said), "worded": said.to_json()},
                                       "exiting": True, "stdout": out, "stderr": err})
        finally:
            self._exit(0)

    def serve(self) -> None:
        """Answer requests until the grader closes the socket. What a request changed of
        the global state a drill may not touch is read here, by this loop's own locals,
        taken before any submission code ran (``grader.contract.effects``): the snapshot is
        immutable and the sentences go straight into the answer, through no object a
        submission could reach and empty."""
        watched, snapshot, changes = effects.WATCHED, effects.snapshot, effects.changes
        send = send_answer
        while True:
            try:
                header, payload = wire.receive(self.sock)
            except EOFError:
                return
            self.cpu = follow_cpu(header.get("cpu"), self.cpu)
            before = snapshot(watched)
            try:
                answer, buffers = self.handle(header, payload)
            except BaseException as exc:  # noqa: BLE001 - every outcome goes back as data
                answer, buffers = {"raise": self._exception(exc)}, []
            said = changes(before, watched)
            sys.stdout.flush()
            sys.stderr.flush()
            answer["stdout"], answer["stderr"] = (c.take() for c in self.captured)
            answer["effects"] = said
            with SEND_LOCK:
                try:
                    send(self.sock, answer, buffers)
                except (wire.WireError, TypeError, ValueError) as exc:
                    send(self.sock, {"raise": self._exception(wire.WireError(str(exc)))}, [])

    def handle(self, header: dict[str, Any], payload: memoryview) -> tuple[dict[str, Any], list]:
        channel = Channel(self.sock)
        decoder = Decoder(header.get("objects", []), payload, trusted=True,  # the grader's
                          recorder=lambda index: RemoteBatchSizes(channel, index))
        sent = decoder.all_objects()
        op = header["op"]
        self.function = f"{header.get('name', 'the submission')}()"
        if op == "backward":
            return self._backward(header, decoder)
        arguments: tuple[Any, ...] | None = None
        if op in ("call", "rank"):
            args = decoder.value(header["args"])
            kwargs = decoder.value(header["kwargs"]) if op == "call" else {}
            # as the call leaves them, their lists and dicts go back (a tuple: what it holds
            # cannot be swapped for copies by code that finds it in this frame)
            arguments = (*args, *kwargs.values())
            try:
                if op == "call":
                    result = self.impl.run(header["name"], args, kwargs)  # serve observes the effects
                else:
                    result = self._rank(header, args, channel)
            except BaseException as exc:  # noqa: BLE001 - the raise goes back as data, with the arguments
                return self._raised(exc, sent, arguments)
        elif op == "gloo":
            os.environ["GLOO_SOCKET_IFNAME"] = "lo"
            result = harness.gloo_rank_call(
                self.impl.function(header["name"]), header["name"], self.impl.path,
                self.impl.forbidden, decoder.value(header["args"]), header["rank"],
                header["world"], header["init_file"], header["p2p"])
        else:
            raise wire.WireError(f"unknown request {op!r}")
        return self._answer(result, sent, arguments)

    def _rank(self, header: dict[str, Any], args: list[Any], channel: Channel) -> Any:
        """One rank of a rank run: every rank is a worker of its own, so ranks share no
        memory but what the grader passes between them. The rank's collectives (or sends
        and receives) are the grader's: each call is a message, served and counted there,
        which knows which worker, hence which rank, it came from. The call runs in a
        thread; this one routes the grader's answers to it until the grader says done."""
        name, rank, world = str(header["name"]), int(header["rank"]), int(header["world"])
        if header.get("collective"):
            collective = str(header["collective"])
            kwargs: dict[str, Any] = {collective: RemoteCollective(channel, collective).for_rank(rank)}
        else:
            kwargs = RemotePointToPoint(channel, world).for_rank(rank)
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["result"] = self.impl.run(name, args, kwargs)
            except BaseException as exc:  # noqa: BLE001 - raised below, in this thread
                outcome["error"] = exc
            finally:
                channel.tell({"rank_done": rank})

        channel.expect_answers()
        runner = threading.Thread(target=run, name=f"rank-{rank}", daemon=True)
        runner.start()
        channel.route()
        runner.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["result"]

    def _answer(self, result: Any, sent: list[Any],
                arguments: tuple[Any, ...] | None = None) -> tuple[dict[str, Any], list]:
        """The call's result, and every object it was sent as it is now, bytes and all: the
        grader compares them with its own copies (version counters miss writes through
        numpy or ``.data``); and the arguments themselves, whose lists and dicts it compares
        with its own (``arguments.changed_containers``). An answer tensor in an argument's
        memory goes as its view."""
        encoder = Encoder(strict=False, known=sent)
        node = encoder.value(result)
        for obj in sent:  # what the call did to its arguments goes back too
            encoder.ref(obj)
        answer: dict[str, Any] = {"ok": node}
        if arguments is not None:
            answer["after"] = encoder.value(arguments)
        answer["objects"] = encoder.objects
        outputs = [i for i, entry in enumerate(encoder.objects) if i >= len(sent)  # new entries: never None
                   and entry is not None and entry.get("k") == "tensor" and entry.get("rg")]
        inputs = [i for i, obj in enumerate(sent) if isinstance(obj, torch.Tensor) and obj.requires_grad]
        if outputs and inputs:
            self.calls += 1
            self.graphs[self.calls] = ([encoder.table[i] for i in outputs], [sent[i] for i in inputs])
            while len(self.graphs) > KEPT_GRAPHS:
                self.graphs.popitem(last=False)
            answer["graph"] = {"id": self.calls, "outputs": outputs, "inputs": inputs}
        return answer, encoder.buffers

    def _raised(self, exc: BaseException, sent: list[Any],
                arguments: tuple[Any, ...] | None = None) -> tuple[dict[str, Any], list]:
        """What the call raised, and every object it was sent as it is now, as ``_answer``
        sends them after a return: what a call did to its arguments before it raised (a
        write, a hook left on a module) reaches the grader's copies too, as it stays on
        the test's objects in-process. Arguments that cannot cross end the answer as
        after a return (``serve`` sends what the encoder raised instead)."""
        said = self._exception(exc)
        encoder = Encoder(strict=False, known=sent)
        for obj in sent:
            encoder.ref(obj)
        answer: dict[str, Any] = {"raise": said}
        if arguments is not None:
            answer["after"] = encoder.value(arguments)
        answer["objects"] = encoder.objects
        return answer, encoder.buffers

    def _backward(self, header: dict[str, Any], decoder: Decoder) -> tuple[dict[str, Any], list]:
        graph = self.graphs.get(header["graph"])
        if graph is None:
            raise wire.WireError("backward through a call whose graph is no longer kept")
        outputs, inputs = graph
        grads = decoder.value(header["grads"])

        def backward() -> Any:
            return list(torch.autograd.grad(outputs, inputs, grads, allow_unused=True,
                                            retain_graph=True))

        result = guarded_call(backward, "the backward pass through your function",
                              self.impl.path, self.impl.forbidden, (), {})
        encoder = Encoder(strict=False)
        return {"ok": encoder.value(result), "objects": encoder.objects}, encoder.buffers

    def _exception(self, exc: BaseException) -> dict[str, Any]:
        """What a request raised, as data (``grader.sandbox.sandboxed_impl`` rebuilds it)."""
        shown = self._shown
        if isinstance(exc, (NotAttempted, SubmissionError)):
            kind = "not_attempted" if isinstance(exc, NotAttempted) else "submission_error"
            kept = worded(exc)
            said = None if kept is None else Message(kept.id, {k: shown(v) if isinstance(v, str) else v
                                                                for k, v in kept.params.items()}).to_json()
            return {"kind": kind, "message": shown(str(exc)), "worded": said}
        if isinstance(exc, StudentError):
            original = exc.original
            return {"kind": "student_error", "function": exc.function,
                    "types": [c.__name__ for c in type(original).__mro__],
                    "message": shown(_safe_str(original)), "traceback": shown(exc.traceback_text)}
        if isinstance(exc, AssertionError):  # a forbidden use the guard caught here: its words kept
            kept = worded(exc)
            said = None if kept is None else Message(kept.id, {k: shown(v) if isinstance(v, str) else v
                                                                for k, v in kept.params.items()}).to_json()
            return {"kind": "assertion", "message": shown(_safe_str(exc)), "worded": said}
        if isinstance(exc, wire.WireError):
            return {"kind": "wire", "message": str(exc)}
        return {"kind": "student_error", "function": "the worker",
                "types": [c.__name__ for c in type(exc).__mro__], "message": shown(_safe_str(exc)),
                "traceback": shown("".join(traceback.format_exception(exc))[-4000:])}

    def _shown(self, text: str) -> str:
        return text.replace(str(self.copy_root), self.shown_root)



def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:4000]
    except Exception:  # noqa: BLE001 - a student's exception may have a broken __str__
        return f"({type(exc).__name__} whose message cannot be shown)"


def _make_scratch(path: Path) -> None:
    """A worker's folder on the scratch tmpfs (and its submission's folder there), made
    while this process is still root in the sandbox; the uid drop hands it over."""
    if not path.is_relative_to(confine.SCRATCH) or ".." in path.parts:
        raise ValueError(f"{path} is not under {confine.SCRATCH}")
    path.parent.mkdir(mode=0o755, exist_ok=True)
    path.mkdir(mode=0o700, exist_ok=True)


def _die_with_zygote(zygote: int) -> None:
    """SIGKILL this worker when the zygote goes (the grader restarts a dead zygote,
    and nothing may outlive it). Set after the uid drop, which clears it."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:  # it went before we asked
        os._exit(0)


_PR_SET_PDEATHSIG = 1


def serve(sock: socket.socket, request: dict[str, Any]) -> None:
    """The worker's life, in the forked child: confine, say hello, serve."""
    plan = confine.Plan.from_json(request["plan"])
    writable = [request["tmp"], *([request["shared"]] if request.get("shared") else [])]
    if request.get("make"):  # on the scratch tmpfs, which only the sandbox sees: made here
        for path in writable:
            _make_scratch(Path(path))
    applied = lockdown.confine_worker(plan, readable=[request["copy"]], writable=writable,
                                     role=request.get("role", "worker"))
    _die_with_zygote(request["zygote"])
    os.chdir(request["tmp"])
    torch.set_num_threads(1)
    worker = Worker(sock, request)
    hello: dict[str, Any] = {"hello": True, "applied": applied}
    if request.get("gpu"):  # before the armor asks CUDA too: a failed start warns only once
        hello["gpu"] = _gpu_problem()
    armor.install(dict(request.get("forbid") or {}), worker.refused)  # before any submission code
    _seal_grader()
    wire.send(sock, hello)
    worker.serve()


GRADER_PACKAGE = "grader"
_SEALED_ATTRIBUTES = frozenset({"__defaults__", "__kwdefaults__"})


def _seal_grader() -> None:
    """Put the grader's own modules out of a submission's reach, before it is imported:
    they leave ``sys.modules`` (this worker's code keeps what it imported), and an audit
    hook, which cannot be removed, refuses to import any of them again and to rewrite the
    defaults of their functions (where ``grader.contract.effects`` keeps its C readers).
    Importing one fails as if it did not exist; the static scan flags the attempt
    (``grader.grading.scan``)."""
    prefix = GRADER_PACKAGE + "."
    for name in [n for n in sys.modules if n == GRADER_PACKAGE or n.startswith(prefix)]:
        del sys.modules[name]
    # ``__main__`` is the launcher's script (grader.sandbox.launch), which holds the package
    sys.modules["__main__"] = ModuleType("__main__")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            name = args[0] if args and isinstance(args[0], str) else ""
            if name == GRADER_PACKAGE or name.startswith(prefix):
                raise ModuleNotFoundError(f"No module named {name!r} (the grader's modules are not "
                                          "available to a submission)", name=name)
        elif event == "object.__setattr__" and len(args) > 1 and args[1] in _SEALED_ATTRIBUTES \
                and type(args[0]) is FunctionType and str(args[0].__module__).startswith(prefix):
            raise PermissionError("rewriting the grader's functions is not available to a submission")

    sys.addaudithook(hook)


def _gpu_problem() -> str:
    """Why this confined worker cannot compute on the GPU ("" when it can): what CUDA
    said, warnings included (a failed driver call shows only as a warning)."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            if torch.cuda.is_available():
                torch.ones(1, device="cuda").add_(1).item()
                return ""
            problem = "torch.cuda.is_available() is False"
        except Exception as exc:  # noqa: BLE001 - whatever CUDA raises is the answer
            problem = f"{type(exc).__name__}: {exc}"
    return "; ".join([problem, *(str(w.message) for w in said)])
