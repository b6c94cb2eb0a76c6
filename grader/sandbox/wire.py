"""Plain data across the trust boundary: a JSON header plus raw tensor bytes.

What a sandboxed worker sends back is never unpickled. A message is a JSON
header and one byte payload; every tensor in it is described in the header
(dtype from an allowlist, shape, strides, byte count) and its bytes are a slice
of the payload. The receiver checks all of it and rebuilds exact ``torch.Tensor``
objects itself, so a tensor subclass, an object with a lying ``__eq__`` or a
patched ``torch.allclose`` on the worker's side cannot reach the comparison.

Values travel as a tree of JSON scalars, lists and tags (``{"tuple": [...]}``,
``{"dict": [[k, v], ...]}``...). Tensors, ``torch.nn`` modules and ``torch.optim``
optimizers live in an *object table* and the tree refers to them by index
(``{"obj": i}``), so identity survives the trip: a parameter shared by a module
and its optimizer is one object on both sides, and a student who returns the
tensor they were given returns the grader's own tensor.

Mutation travels back too. The worker answers with the whole table's state after
the call, every argument's bytes included (a write through a numpy view or
``.data`` moves no version counter, so none is trusted), and the grader compares
them with its own copies and writes what the spec allows into its own objects in
place: a gradient-averaging drill that fills ``p.grad``, or a GAN step that moves
two models and two optimizers, behaves as it does in-process.

Aliasing travels as layout, not as bytes: an answer tensor that lies in the memory
of an argument the worker was sent crosses as a *view* of that argument (its
offset, dtype, shape and strides) and is rebuilt in the grader as a view of the
grader's own copy, after that copy's write-back, so "returns a new tensor" gets
the verdict it gets in-process. A view carries no bytes of its own, so it makes
no claim about content; that it *is* a view is found by the worker's encoder from
storage addresses read through torch's C methods, taken when its module is
imported (before any submission code): see ``Encoder._view`` in
``grader.sandbox.encoding``.

Anything else a student returns (a numpy array, an ``int`` subclass, a custom
module) comes back as an ``Opaque`` stand-in that equals nothing, so the test
fails it as a wrong type, as it would in-process.

This module holds what both sides share: the framing (``send``, ``receive``), the
limits, the dtypes and module settings that may cross, and the errors. Making a
message is ``grader.sandbox.encoding``; reading one, with every check the grader
relies on, is ``grader.sandbox.decoding``; writing what came back into the grader's
objects is ``grader.sandbox.writeback``.
"""

from __future__ import annotations

import functools
import inspect
import json
import socket
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

MAGIC = b"TDW1"
PREFIX = struct.Struct("!4sIQ")  # magic, header bytes, payload bytes
MAX_HEADER_BYTES = 2 * 2**20  # a drill answer's header is a few KB; JSON grows about 40x in memory
MAX_PAYLOAD_BYTES = 64 * 2**20  # a drill's tensors are tiny; this refuses a 240 MiB answer
# Elements of one tensor in an answer, however few bytes carry them (a stride-0 view of one
# number): whatever the grader then does with it in C (compare, print) is bounded by this.
MAX_ELEMENTS = 2**20
MAX_DIMS = 16
MAX_DEPTH = 64
ALIGN = 64

DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name) for name in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
        "float32", "float64", "complex64", "complex128")
}
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))
# What decoding a malformed message raises besides ``WireError``: a table whose parts have
# the wrong JSON types, numbers torch cannot take, structures nested past the stack.
MALFORMED = (TypeError, IndexError, ValueError, KeyError, OverflowError, RecursionError,
             RuntimeError, AttributeError)


class WireError(Exception):
    """A message breaks the contract (bad tensor description, oversize, unknown tag)."""


@contextmanager
def refusing_malformed(what: str = "the answer") -> Iterator[None]:
    """Turn any error that decoding ``what`` raises into a ``WireError``: a forged frame
    is the sender's broken contract, never a failure of the test that reads it."""
    try:
        yield
    except WireError:
        raise
    except MALFORMED as exc:
        raise WireError(f"{what} is malformed ({type(exc).__name__}: {str(exc)[:200]})") from None


MAX_LEFT_HOOKS = 8  # hooks left on a module that the grader mirrors (one already says "left")


class LeftBehind:
    """Stands, on the grader's own module, for a forward hook (or pre-hook) that a call
    left on the worker's copy of it: the worker's encoder counts each module's hook
    tables with references taken before any submission code (``encoding._hooks_held``),
    and the decoder puts one of these on the grader's module per hook left, so "every
    hook was removed" reads the same tables in every isolation mode. It does nothing
    when called, and never crosses to a worker (the encoder leaves it out)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "<a hook the call left on the worker's copy of this module>"


class Opaque:
    """Stands for a value that cannot cross the boundary; equal to nothing but itself."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"


# ---------------------------------------------------------------- framing

def send(sock: socket.socket, header: dict[str, Any], buffers: Sequence[memoryview] = ()) -> None:
    """Write one message: prefix, JSON header, payload (buffers padded to 64 bytes).

    One ``sendmsg`` for the lot where the socket takes it: the reader then wakes once
    per message, not once per part (a third of a small call's round trip).
    """
    head = json.dumps(header, separators=(",", ":")).encode()
    parts: list[memoryview | bytes] = []
    size = 0
    for buf in buffers:
        pad = -size % ALIGN
        if pad:
            parts.append(bytes(pad))
            size += pad
        parts.append(buf)
        size += buf.nbytes
    parts.insert(0, PREFIX.pack(MAGIC, len(head), size) + head)
    total = sum(memoryview(p).nbytes for p in parts)
    sent = sock.sendmsg(parts)
    if sent < total:  # a big payload: the rest the slow way
        rest = b"".join(bytes(p) for p in parts)[sent:]
        sock.sendall(rest)


def receive(sock: socket.socket, max_payload: int = MAX_PAYLOAD_BYTES) -> tuple[dict[str, Any], memoryview]:
    """Read one message; raise ``WireError`` for anything malformed or oversize,
    ``EOFError`` if the other side closed the connection."""
    magic, head_len, payload_len = PREFIX.unpack(_read_exact(sock, PREFIX.size))
    if magic != MAGIC:
        raise WireError("the message does not start with the protocol's magic bytes")
    if head_len > MAX_HEADER_BYTES:
        raise WireError(f"the answer's header is {head_len} bytes (limit {MAX_HEADER_BYTES})")
    if payload_len > max_payload:
        raise WireError(f"the answer holds {payload_len / 2**20:.0f} MiB of tensor data "
                        f"(limit {max_payload / 2**20:.0f} MiB)")
    body = memoryview(_read_exact(sock, head_len + payload_len))
    try:
        header = json.loads(body[:head_len].tobytes())
    except (ValueError, RecursionError) as exc:
        raise WireError(f"the header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise WireError("the header is not a JSON object")
    return header, body[head_len:]


def _read_exact(sock: socket.socket, n: int) -> bytearray:
    data = bytearray(n)
    view = memoryview(data)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("the other side closed the connection")
        got += k
    return data




# Settings a torch.nn module keeps that are neither constructor arguments nor constants.
_DERIVED_SETTINGS: dict[str, tuple[str, ...]] = {
    "_ConvNd": ("transposed", "_reversed_padding_repeated_twice"),
}


def transient_buffers(m: torch.nn.Module) -> list[str]:
    """The buffers ``m`` keeps out of its ``state_dict`` (``register_buffer(...,
    persistent=False)``), in its buffers' order: what crosses the wire, and what a
    call may have changed."""
    return [name for name in m._buffers if name in m._non_persistent_buffers_set]


@functools.cache
def settings_of(cls: type) -> frozenset[str]:
    """The instance attributes a ``torch.nn`` module may carry across the wire: its
    constructor's arguments, its ``__constants__`` and the few settings its
    constructor derives from them. Nothing else: an instance ``forward`` (a module
    that claims to be a Conv2d but runs a conv and a batch norm) is refused."""
    names: set[str] = set(getattr(cls, "__constants__", ()))
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None and klass is not torch.nn.Module and klass is not object:
            try:
                names |= set(inspect.signature(init).parameters)
            except (TypeError, ValueError):
                pass
        names |= set(_DERIVED_SETTINGS.get(klass.__name__, ()))
    shadowing = {n for n in names if callable(getattr(cls, n, None))}
    return frozenset(names - shadowing - {"self", "args", "kwargs"} - _MODULE_INTERNALS)


def is_plain(v: Any, depth: int = 0) -> bool:
    """A setting that crosses as it is: None, a bool, int, float or str, or tuples and
    lists of those nested a few deep (both sides ask it of a module's settings)."""
    if v is None or type(v) in (bool, int, float, str):
        return True
    if type(v) in (tuple, list) and depth < 4:
        return all(is_plain(x, depth + 1) for x in v)
    return False


def storage_span(shape: Sequence[int], stride: Sequence[int]) -> int:
    """Storage elements a strided tensor touches (0 when it is empty)."""
    if 0 in shape:
        return 0
    span = 1
    for size, step in zip(shape, stride):
        span += (size - 1) * step
    return span
