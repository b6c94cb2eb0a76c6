"""The untrusted side of the trust boundary: a zygote and the workers it forks.

``python -I -m grader.sandbox.worker`` starts the *zygote* (``grader.sandbox.remote`` does it, in a
scrubbed environment, inside bubblewrap where available). The zygote imports
torch and the confinement libraries once, then waits on its control socket
(fd 0). It never holds the reference or the tests and never runs student code.
For each request it forks a *worker*: a new session that confines itself
(``grader.sandbox.confine``), redirects its stdout/stderr into capped captures, and
serves requests on the socket the grader handed over:

- ``call``: run one student function under the drill's guard;
- ``backward``: send gradients back through the graph of an earlier call;
- ``rank``: be one rank of a rank run, whose collectives (or sends and receives) the
  grader serves: every rank is a worker of its own;
- ``gloo``: be one real gloo rank.

Every answer is a ``grader.sandbox.wire`` message: plain data and raw tensor bytes.
"""

from __future__ import annotations

import _socket
import ctypes
import gc
import hmac
import importlib
import json
import os
import queue
import selectors
import signal
import socket
import sys
import threading
import traceback
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import torch

from grader.contract import effects, harness
from grader.contract.call import guarded_call
from grader.contract.forbid import Forbidden, ForbiddenUse
from grader.contract.impl import Implementation
from grader.core import files
from grader.core.outcomes import NotAttempted, StudentError, SubmissionError
from grader.sandbox import armor, confine, wire
from grader.sandbox.zygote import key_digest

# Imported by a warm zygote, once, though torch would import them lazily: otherwise every
# worker that needs them pays them again (torch._dynamo with sympy's symbolic shapes,
# 1.2 s, when a worker builds its first optimizer: the GAN's, grad_accum's).
WARM_IMPORTS = ("torch.fx.experimental.symbolic_shapes", "torch._dynamo", "torch.distributed")
MAX_OUTPUT_BYTES = 64 * 1024  # student stdout/stderr kept per request
KEPT_GRAPHS = 16  # calls whose autograd graph a later ``backward`` may use


# ---------------------------------------------------------------- zygote

class _Client:
    """One connection that asks this zygote for workers: the owner's control socket, or
    a grading process that shares the zygote (``share``). Each kills only its own."""

    def __init__(self, sock: socket.socket, known: bool):
        self.sock = sock
        self.known = known  # the owner is; a sharer once it has shown the key
        self.children: set[int] = set()
        self.cpu_done = 0.0  # CPU seconds of its workers that have ended (the kernel's rusage)

    def cpu_seconds(self) -> float:
        """The CPU time its workers used, ended ones and running ones, as the kernel
        counts it (drill budgets count CPU, not wall time: ``grader.grading.session``)."""
        return self.cpu_done + sum(_cpu_of(pid) for pid in self.children)

    def ended(self, pid: int, usage: Any) -> None:
        self.children.discard(pid)
        if usage is not None:
            self.cpu_done += usage.ru_utime + usage.ru_stime


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_of(pid: int) -> float:
    """User plus system CPU seconds of the running process ``pid`` (all its threads)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return 0.0


def zygote(control: socket.socket, warm: bool) -> None:
    """Fork one worker per request until the owner closes the control socket (fd 0)
    (``warm``: import ``WARM_IMPORTS`` first, as a later ``warm`` request does).

    The owner may ``share`` the zygote: it hands over a listening socket, bound where
    only the grader's own processes can reach it, and the digest of a key; a grading
    process that connects there and shows the key is served like the owner (pytest-xdist's
    workers, sharing their controller's zygote). Only the digest is kept here, as the
    workers forked from this process could read anything in its memory.
    """
    sealed = confine.seal_scratch()  # first: the zygote holds CAP_SYS_ADMIN for this alone
    if sealed is not None:
        print(f"zygote: {sealed}", file=sys.stderr, flush=True)  # each worker reports it too
    if warm:
        _warm_up()
    confine.preload()
    armor.preload()
    gc.freeze()  # what the zygote made stays shared with its workers, never copied
    owner = _Client(control, known=True)
    clients = [owner]
    listener: socket.socket | None = None
    digest = ""
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, owner)
    while owner.sock.fileno() >= 0:
        for ready, _ in selector.select():
            client = ready.data
            if client is None:  # the listener: a grading process that shares this zygote
                assert listener is not None
                _accept(listener, clients, selector)
                continue
            if client.sock.fileno() < 0:  # dropped earlier in this round
                continue
            request, fds = _read(client)
            if request is None or not (client.known or _shows_key(request, digest)):
                for fd in fds:
                    os.close(fd)
                _drop(client, clients, selector)
                continue
            answer = {"hello": True}
            if not client.known:
                client.known = True
            elif request.get("op") == "share":
                shares = client is owner and listener is None and bool(fds)
                if shares:
                    listener = socket.socket(fileno=fds.pop(0))
                    digest = str(request.get("key", ""))
                    selector.register(listener, selectors.EVENT_READ, None)
                for fd in fds:
                    os.close(fd)
                answer = {"shared": shares}
            else:
                _reap(clients)
                answer = _handle(request, fds, client, clients, listener, selector)
            try:
                client.sock.sendall(json.dumps(answer).encode())
            except OSError:  # that grading process is gone: so are its workers
                _drop(client, clients, selector)
    for client in clients:
        for pid in client.children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    # No interpreter teardown: torch's finalizers (unregistering its operator libraries)
    # took ~0.3 s, and the grader waits for this exit at the end of every grading.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _handle(request: dict[str, Any], fds: list[int], client: _Client, clients: list[_Client],
            listener: socket.socket | None, selector: selectors.BaseSelector) -> dict[str, Any]:
    """Serve one request of a known client (a share is the loop's); its answer."""
    op = request.get("op")
    if op == "fork":
        request["zygote"] = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: none of the zygote's connections go with it
            selector.close()
            for other in clients:
                other.sock.close()
            if listener is not None:
                listener.close()
            os.setsid()
            code = 0
            try:
                serve(socket.socket(fileno=fds[0]), request)
            except BaseException:  # noqa: BLE001 - a worker never returns into the zygote loop
                code = 70
            os._exit(code)
        for fd in fds:
            os.close(fd)
        client.children.add(pid)
        return {"pid": pid}
    for fd in fds:  # only a fork hands over a socket
        os.close(fd)
    if op == "kill":
        _kill([pid for pid in map(int, request["pids"]) if pid in client.children], client)
        return {"killed": True}
    if op == "wipe":
        _wipe(str(request.get("path", "")), request.get("uid"))
        return {"wiped": True}
    if op == "cpu":
        return {"cpu": client.cpu_seconds()}
    if op == "warm":
        _warm_up()
        gc.freeze()
        return {"warm": True}
    return {"unknown": op}


def _accept(listener: socket.socket, clients: list[_Client], selector: selectors.BaseSelector) -> None:
    """A new connection: a stranger until it shows the key."""
    try:
        sock, _ = listener.accept()
    except OSError:  # out of descriptors, say: no more sharers (they start zygotes of their own)
        selector.unregister(listener)
        listener.close()
        return
    sock.setblocking(True)
    stranger = _Client(sock, known=False)
    clients.append(stranger)
    selector.register(sock, selectors.EVENT_READ, stranger)


def _read(client: _Client) -> tuple[dict[str, Any] | None, list[int]]:
    """One request (None: the connection closed, or what came is not a request) and
    the descriptors it carried."""
    try:
        message, fds, _, _ = socket.recv_fds(client.sock, 1 << 20, 4)
    except OSError:
        return None, []
    try:
        request = json.loads(message) if message else None
    except ValueError:
        request = None
    return (request if isinstance(request, dict) else None), fds


def _shows_key(request: dict[str, Any], digest: str) -> bool:
    """A sharer's first message: ``{"op": "hello", "key": ...}`` with the right key."""
    key = request.get("key")
    return (bool(digest) and request.get("op") == "hello" and isinstance(key, str)
            and hmac.compare_digest(key_digest(key), digest))


def _drop(client: _Client, clients: list[_Client], selector: selectors.BaseSelector) -> None:
    """A connection closed (or a stranger): its workers die with it. The owner's closing
    ends the zygote (the loop sees its socket closed)."""
    _kill(list(client.children), client)
    selector.unregister(client.sock)
    clients.remove(client)
    client.sock.close()


def _kill(pids: list[int], client: _Client) -> None:
    """Kill ``pids`` (``client``'s workers) all first, then wait: their exits overlap."""
    killed = []
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError as exc:  # gone already; or not ours to kill: say so, go on
            print(f"zygote: cannot kill worker {pid}: {exc}", file=sys.stderr, flush=True)
    for pid in killed:
        try:
            _, _, usage = os.wait4(pid, 0)
            client.ended(pid, usage)
        except OSError:
            pass


def _warm_up() -> None:
    for name in WARM_IMPORTS:
        importlib.import_module(name)


def _reap(clients: Iterable[_Client]) -> None:
    for client in clients:
        for pid in list(client.children):
            usage = None
            try:
                done, _, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                client.ended(pid, usage)


# ---------------------------------------------------------------- worker

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
        self._send, self._exit, self._use = _send_answer, os._exit, ForbiddenUse

    def refused(self, name: str, hint: str) -> None:
        """A forbidden API was used (``grader.sandbox.armor``): tell the grader, and end
        this worker before the submission's code can run again."""
        message = self._use(name, hint).message(self.function)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            out, err = (c.take() for c in self.captured)
            with _SEND_LOCK:
                self._send(self.sock, {"raise": {"kind": "assertion", "message": message},
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
        send = _send_answer
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
            with _SEND_LOCK:
                try:
                    send(self.sock, answer, buffers)
                except (wire.WireError, TypeError, ValueError) as exc:
                    send(self.sock, {"raise": self._exception(wire.WireError(str(exc)))}, [])

    def handle(self, header: dict[str, Any], payload: memoryview) -> tuple[dict[str, Any], list]:
        channel = _Channel(self.sock)
        decoder = wire.Decoder(header.get("objects", []), payload, trusted=True,  # the grader's
                               recorder=lambda index: _RemoteBatchSizes(channel, index))
        sent = decoder.all_objects()
        op = header["op"]
        self.function = f"{header.get('name', 'the submission')}()"
        if op == "backward":
            return self._backward(header, decoder)
        if op == "call":
            result = self.impl.run(header["name"], decoder.value(header["args"]),
                                   decoder.value(header["kwargs"]))  # serve observes the effects
        elif op == "rank":
            result = self._rank(header, decoder.value(header["args"]), channel)
        elif op == "gloo":
            os.environ["GLOO_SOCKET_IFNAME"] = "lo"
            result = harness.gloo_rank_call(
                self.impl.function(header["name"]), header["name"], self.impl.path,
                self.impl.forbidden, decoder.value(header["args"]), header["rank"],
                header["world"], header["init_file"], header["p2p"])
        else:
            raise wire.WireError(f"unknown request {op!r}")
        return self._answer(result, sent)

    def _rank(self, header: dict[str, Any], args: list[Any], channel: _Channel) -> Any:
        """One rank of a rank run: every rank is a worker of its own, so ranks share no
        memory but what the grader passes between them. The rank's collectives (or sends
        and receives) are the grader's: each call is a message, served and counted there,
        which knows which worker, hence which rank, it came from. The call runs in a
        thread; this one routes the grader's answers to it until the grader says done."""
        name, rank, world = str(header["name"]), int(header["rank"]), int(header["world"])
        if header.get("collective"):
            collective = str(header["collective"])
            kwargs: dict[str, Any] = {collective: _RemoteCollective(channel, collective).for_rank(rank)}
        else:
            kwargs = _RemotePointToPoint(channel, world).for_rank(rank)
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

    def _answer(self, result: Any, sent: list[Any]) -> tuple[dict[str, Any], list]:
        """The call's result, and every object it was sent as it is now, bytes and all: the
        grader compares them with its own copies (version counters miss writes through
        numpy or ``.data``). An answer tensor in an argument's memory goes as its view."""
        encoder = wire.Encoder(strict=False, known=sent)
        node = encoder.value(result)
        for obj in sent:  # what the call did to its arguments goes back too
            encoder.ref(obj)
        answer: dict[str, Any] = {"ok": node, "objects": encoder.objects}
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

    def _backward(self, header: dict[str, Any], decoder: wire.Decoder) -> tuple[dict[str, Any], list]:
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
        encoder = wire.Encoder(strict=False)
        return {"ok": encoder.value(result), "objects": encoder.objects}, encoder.buffers

    def _exception(self, exc: BaseException) -> dict[str, Any]:
        """What a request raised, as data (``grader.sandbox.remote`` rebuilds it)."""
        shown = self._shown
        if isinstance(exc, NotAttempted):
            return {"kind": "not_attempted", "message": shown(str(exc))}
        if isinstance(exc, SubmissionError):
            return {"kind": "submission_error", "message": shown(str(exc))}
        if isinstance(exc, StudentError):
            original = exc.original
            return {"kind": "student_error", "function": exc.function,
                    "types": [c.__name__ for c in type(original).__mro__],
                    "message": shown(_safe_str(original)), "traceback": shown(exc.traceback_text)}
        if isinstance(exc, AssertionError):
            return {"kind": "assertion", "message": shown(_safe_str(exc))}
        if isinstance(exc, wire.WireError):
            return {"kind": "wire", "message": str(exc)}
        return {"kind": "student_error", "function": "the worker",
                "types": [c.__name__ for c in type(exc).__mro__], "message": shown(_safe_str(exc)),
                "traceback": shown("".join(traceback.format_exception(exc))[-4000:])}

    def _shown(self, text: str) -> str:
        return text.replace(str(self.copy_root), self.shown_root)


def _raise_type_error(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} in an answer's header")


# ``json.dumps`` with wire.send's separators, through C alone: ``json`` and its encoder
# class are Python a submission could patch (``json.dumps = ...`` rewrote every answer).
_ENCODE_JSON = c_make_encoder(None, _raise_type_error, encode_basestring_ascii, None, ":", ",",
                              False, False, True)


def _send_answer(sock: socket.socket, header: dict[str, Any], buffers: Sequence[memoryview] = (),
                 encode: Any = _ENCODE_JSON, join: Any = "".join, pack: Any = wire._PREFIX.pack,
                 magic: bytes = wire.MAGIC, align: int = wire._ALIGN,
                 sendmsg: Any = _socket.socket.sendmsg, sendall: Any = _socket.socket.sendall,
                 len: Any = len, bytes: Any = bytes, memoryview: Any = memoryview) -> None:
    """``wire.send`` of a request's answer (the same frame) by what was captured at import,
    before any submission ran: the C JSON encoder, the socket's C methods, the builtins.
    Rebinding ``json``, ``socket.socket`` or a builtin changes nothing here, so the
    answer says what this loop put in it (its effects above all)."""
    head = join(encode(header, 0)).encode()
    parts: list[Any] = [b""]
    size = 0
    for buf in buffers:
        pad = -size % align
        if pad:
            parts.append(bytes(pad))
            size += pad
        parts.append(buf)
        size += memoryview(buf).nbytes
    parts[0] = pack(magic, len(head), size) + head
    total = len(parts[0]) + size
    sent = sendmsg(sock, parts)
    if sent < total:  # a big payload: the rest the slow way
        sendall(sock, b"".join([bytes(p) for p in parts])[sent:])


# ---------------------------------------------------------------- talking to the grader mid-call

_SEND_LOCK = threading.Lock()  # every message this worker sends mid-call, from any thread

class _Channel:
    """The worker's side of a conversation within one request: the rank's call asks the
    grader (a collective, a send or a receive) and waits for its answer; recorders tell it
    what they saw; the serving thread routes the grader's answers to the call."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.lock = _SEND_LOCK
        # The grader's answers to one rank's asks: made by ``expect_answers`` before the
        # rank's thread starts. A plain call asks nothing, and a queue made per request was
        # 6% of a worker's time on small calls.
        self.answers: queue.Queue[tuple[dict[str, Any], memoryview]] | None = None

    def expect_answers(self) -> None:
        self.answers = queue.Queue()

    def tell(self, header: dict[str, Any], buffers: list[memoryview] | None = None) -> None:
        with self.lock:
            wire.send(self.sock, header, buffers or [])

    def ask(self, rank: int, header: dict[str, Any], value: Any) -> Any:
        """Send ``header`` with ``value`` encoded, as ``rank``; wait for the grader's answer."""
        encoder = wire.Encoder(strict=False)
        header = {**header, "rank": rank, "value": encoder.value(value), "objects": encoder.objects}
        self.tell(header, encoder.buffers)
        assert self.answers is not None, "a rank asks only after expect_answers"
        answer, payload = self.answers.get()
        if "error" in answer:
            raise harness.CollectiveMismatch(str(answer["error"]))
        return wire.Decoder(answer.get("objects", []), payload, trusted=True).value(answer.get("value"))

    def route(self) -> None:
        """Hand the grader's answers to the rank's call until it says the rank is done."""
        while True:
            header, payload = wire.receive(self.sock)
            if header.get("all_done"):
                return
            assert self.answers is not None, "route only after expect_answers"
            self.answers.put((header, payload))


class _RemoteCollective:
    """``all_reduce`` for a rank, served by the grader's counting fake."""

    def __init__(self, channel: _Channel, collective: str):
        self.channel, self.collective = channel, collective

    def for_rank(self, rank: int) -> Any:
        def all_reduce(tensor: Any, op: Any = None, group: Any = None, async_op: bool = False) -> Any:
            if not isinstance(tensor, torch.Tensor):
                raise harness.CollectiveMismatch(f"all_reduce needs a tensor, got {type(tensor).__name__}")
            total = self.channel.ask(rank, {"collective": self.collective,
                                            "op": None if op is None else str(op)}, tensor.detach())
            tensor.copy_(total)
            return harness.DoneWork() if async_op else None

        all_reduce.rank = rank  # type: ignore[attr-defined]
        return all_reduce


class _RemotePointToPoint:
    """Blocking ``send``/``recv`` for a rank, served by the grader's fake."""

    def __init__(self, channel: _Channel, world: int):
        self.channel, self.world = channel, world

    def for_rank(self, rank: int) -> dict[str, Any]:
        def send(tensor: Any, dst: Any, group: Any = None, tag: int = 0) -> None:
            self.channel.ask(rank, {"p2p": "send", "peer": dst},
                             tensor.detach() if isinstance(tensor, torch.Tensor) else tensor)

        def recv(tensor: Any, src: Any = None, group: Any = None, tag: int = 0) -> Any:
            got = self.channel.ask(rank, {"p2p": "recv", "peer": src},
                                   tensor.detach() if isinstance(tensor, torch.Tensor) else tensor)
            with torch.no_grad():
                tensor.copy_(got)
            return src

        send.rank = recv.rank = rank  # type: ignore[attr-defined]
        return {"send": send, "recv": recv, "rank": rank, "world_size": self.world}


class _RemoteBatchSizes:
    """A recorder the grader put on a module: each forward call's batch size goes to the
    grader as it happens (the grader keeps the record, not this worker)."""

    def __init__(self, channel: _Channel, index: int):
        self.channel, self.index = channel, index

    def __call__(self, module: torch.nn.Module, args: tuple[Any, ...]) -> None:
        self.channel.tell({"record": self.index, "size": int(args[0].shape[0])})


def follow_cpu(cpu: Any, current: int | bool | None) -> int | bool | None:
    """Run on ``cpu``, the grader's CPU when it sent the request; return what is followed.

    The grader waits while its worker runs and the worker waits while the grader
    runs, so sharing one CPU costs no parallelism, and a wake-up on the CPU that
    just went idle is the cheap kind: a small call's round trip measured 0.96 ms
    across CPUs and 0.56 ms on one, on the 2-core development VM. The grader stays on
    its CPU only while it waits (``grader.sandbox.remote``): when the scheduler moves it
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


def _wipe(path: str, uid: Any) -> None:
    """Remove a submission's folder from the scratch tmpfs, as the uid its workers ran as
    (the zygote cannot write in their folders), in a child that ends with it."""
    if not Path(path).is_relative_to(confine.SCRATCH) or ".." in Path(path).parts:
        return
    pid = os.fork()
    if pid == 0:
        try:
            if type(uid) is int:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            files.remove_tree(path)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    files.remove_tree(path)  # what is left is the zygote's own (the folder itself)


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
    applied = confine.confine_worker(plan, readable=[request["copy"]], writable=writable,
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


def main() -> None:
    control = socket.socket(fileno=0)
    zygote(control, warm="warm" in sys.argv[1:])


if __name__ == "__main__":
    main()
