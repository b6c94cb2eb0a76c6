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
storage addresses read through torch's C methods, taken when this module is
imported (before any submission code): see ``Encoder._view``.

Anything else a student returns (a numpy array, an ``int`` subclass, a custom
module) comes back as an ``Opaque`` stand-in that equals nothing, so the test
fails it as a wrong type, as it would in-process.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import math
import socket
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

from grader.contract.arguments import same_state
from grader.contract.harness import BatchSizes

MAGIC = b"TDW1"
_PREFIX = struct.Struct("!4sIQ")  # magic, header bytes, payload bytes
MAX_HEADER_BYTES = 16 * 2**20
MAX_PAYLOAD_BYTES = 256 * 2**20  # a drill's tensors are tiny; this refuses a 1 GiB answer
MAX_DIMS = 16
MAX_DEPTH = 64
_ALIGN = 64
_C = TypeVar("_C")  # the torch class a message may name: Module or Optimizer

DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name) for name in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
        "float32", "float64", "complex64", "complex128")
}
_DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))
# Where a tensor's elements live, read through torch's C types, which no Python code can
# patch ("immutable type"): taken at import, before a worker loads any submission.
_untyped_storage = torch._C.TensorBase.untyped_storage
_storage_offset = torch._C.TensorBase.storage_offset
_element_size = torch._C.TensorBase.element_size
_size = torch._C.TensorBase.size
_stride = torch._C.TensorBase.stride
_is_conj = torch._C.TensorBase.is_conj
_is_neg = torch._C.TensorBase.is_neg
_storage_ptr = torch._C.StorageBase.data_ptr  # type: ignore[attr-defined]  # not in torch's stubs
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
        pad = -size % _ALIGN
        if pad:
            parts.append(bytes(pad))
            size += pad
        parts.append(buf)
        size += buf.nbytes
    parts.insert(0, _PREFIX.pack(MAGIC, len(head), size) + head)
    total = sum(memoryview(p).nbytes for p in parts)
    sent = sock.sendmsg(parts)
    if sent < total:  # a big payload: the rest the slow way
        rest = b"".join(bytes(p) for p in parts)[sent:]
        sock.sendall(rest)


def receive(sock: socket.socket, max_payload: int = MAX_PAYLOAD_BYTES) -> tuple[dict[str, Any], memoryview]:
    """Read one message; raise ``WireError`` for anything malformed or oversize,
    ``EOFError`` if the other side closed the connection."""
    magic, head_len, payload_len = _PREFIX.unpack(_read_exact(sock, _PREFIX.size))
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


# ---------------------------------------------------------------- encoding

class Encoder:
    """Turns values into a JSON tree, an object table and byte buffers."""

    def __init__(self, *, strict: bool = True, known: Sequence[Any] = ()):
        """``strict``: raise ``TypeError`` for values that cannot cross (the grader's
        side: a test passed something the contract does not cover); otherwise
        encode them as opaque. ``known``: objects already in the other side's table,
        in its order (the worker answers about the objects it was sent): each is sent
        whole, and a new tensor in the memory of a known one crosses as its view."""
        self.strict = strict
        self.objects: list[dict[str, Any] | None] = [None] * len(known)
        self.buffers: list[memoryview] = []
        self.payload_bytes = 0
        self.optimizers = 0  # encoded: the other side builds each (the first import is dear)
        self.gpu = False  # a CUDA tensor was encoded: the other side must reach the GPU
        self._index: dict[int, int] = {id(obj): i for i, obj in enumerate(known)}
        self._regions = [(region, i) for i, obj in enumerate(known)
                         if type(obj) in (torch.Tensor, torch.nn.Parameter)
                         and not (_is_conj(obj) or _is_neg(obj)) and (region := _region(obj))]
        self.table: list[Any] = list(known)  # in table order; holding them keeps ids unique

    def value(self, v: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            return self._opaque(v, "nested too deeply")
        t = type(v)
        if v is None or t in (bool, int, str):
            return v
        if t is float:
            return v if math.isfinite(v) else {"float": repr(v)}
        if t is list:
            return [self.value(x, depth + 1) for x in v]
        if t is tuple:
            return {"tuple": [self.value(x, depth + 1) for x in v]}
        if t is dict:
            return {"dict": [[self.value(k, depth + 1), self.value(x, depth + 1)] for k, x in v.items()]}
        if t is torch.Size:
            return {"size": [int(x) for x in v]}
        if isinstance(v, tuple):  # a named tuple, torch.return_types: a spec's "tuple" is any tuple
            return {"tuple": [self.value(x, depth + 1) for x in tuple.__getitem__(v, slice(None))]}
        if t is torch.dtype:
            return {"dtype": _DTYPE_NAMES.get(v) or self._opaque(v, "dtype")}
        if t is torch.device:
            return {"device": str(v)}
        if t in (torch.Tensor, torch.nn.Parameter) or _is_torch_class(v, torch.nn.Module, "torch.nn.") \
                or _is_torch_class(v, torch.optim.Optimizer, "torch.optim."):
            try:
                return {"obj": self.ref(v)}
            except WireError:
                raise
            except Exception as exc:
                if self.strict:
                    raise
                return self._opaque(v, f"cannot cross the grading boundary ({exc})")
        return self._opaque(v, "cannot cross the grading boundary")

    def ref(self, obj: Any) -> int:
        """Index of ``obj`` in the object table, encoding it on first sight."""
        i = self._index.get(id(obj))
        if i is not None:
            if self.objects[i] is None:  # a known object: say what it holds now
                self.objects[i] = {"k": "pending"}
                self.objects[i] = self._state(obj)
            return i
        i = len(self.objects)
        self._index[id(obj)] = i
        self.table.append(obj)
        self.objects.append({"k": "pending"})
        view = self._view(obj) if self._regions and isinstance(obj, torch.Tensor) else None
        self.objects[i] = view if view is not None else self._state(obj)
        return i

    def _view(self, t: torch.Tensor) -> dict[str, Any] | None:
        """``t`` as a view of the known tensor whose memory holds it, or None.

        The addresses come from torch's C methods, taken at import: a submission can
        patch ``torch.Tensor`` but not those. What stays on the worker's word is the
        answer "no argument holds it": code that rewrites this encoder (reaching
        ``grader.sandbox.wire`` through ``sys.modules`` or ``gc``, which the static scan
        flags) could hide a view; it could never pass a copy off as one with other
        values, since a view's values are the argument's."""
        region = _region(t)
        if region is None:
            return None
        device, lo, hi = region
        for (their_device, start, end), j in self._regions:
            if device != their_device or hi <= start or end <= lo:
                continue
            if not (start <= lo and hi <= end):
                raise WireError("an answer tensor lies partly in an argument's memory")
            out = self._tensor_entry(t)
            out["view"] = {"of": j, "offset": lo - start, "conj": bool(_is_conj(t)),
                           "neg": bool(_is_neg(t))}
            self._grad(t, out)
            return out
        return None

    def _state(self, obj: Any) -> dict[str, Any]:
        if isinstance(obj, torch.Tensor):
            return self._tensor(obj)
        if isinstance(obj, torch.nn.Module):
            return self._module(obj)
        return self._optimizer(obj)

    def _tensor_entry(self, t: torch.Tensor) -> dict[str, Any]:
        """What every tensor entry says: dtype, layout, device, autograd flags."""
        if t.device.type != "cpu":
            self.gpu = True
        out: dict[str, Any] = {
            "k": "tensor", "dtype": _DTYPE_NAMES.get(t.dtype), "shape": list(t.shape),
            "stride": list(t.stride()), "device": t.device.type, "rg": bool(t.requires_grad),
            "param": type(t) is torch.nn.Parameter, "nbytes": 0,
        }
        if out["dtype"] is None:
            raise TypeError(f"a {t.dtype} tensor cannot cross the grading boundary")
        return out

    def _grad(self, t: torch.Tensor, out: dict[str, Any]) -> None:
        if t.is_leaf and t.grad is not None:
            out["grad"] = self.value(t.grad)

    def _tensor(self, t: torch.Tensor) -> dict[str, Any]:
        data = t.detach()
        if data.is_conj() or data.is_neg():
            data = data.resolve_conj().resolve_neg()
        if data.device.type != "cpu":
            data = data.cpu()
        out = self._tensor_entry(t)
        shape, stride = list(data.shape), list(data.stride())
        out["shape"], out["stride"] = shape, stride
        span = _span(shape, stride)
        out["nbytes"] = span * data.element_size()
        self.payload_bytes += out["nbytes"]
        if self.payload_bytes > MAX_PAYLOAD_BYTES:  # refused before a byte is copied
            raise WireError(f"the answer would hold {self.payload_bytes / 2**20:.0f} MiB of tensor "
                            f"data (limit {MAX_PAYLOAD_BYTES / 2**20:.0f} MiB)")
        if span:
            flat = torch.as_strided(data, (span,), (1,), data.storage_offset()).contiguous()
            # numpy's stubs give ndarray its __buffer__ only from Python 3.12 (mypy checks as 3.11)
            self.buffers.append(memoryview(flat.view(torch.uint8).numpy()))  # type: ignore[arg-type]
            out["buf"] = len(self.buffers) - 1
        self._grad(t, out)
        return out

    def _module(self, m: torch.nn.Module) -> dict[str, Any]:
        cls: type = type(m)  # a plain type: mypy takes no torch class object for functools.cache's Hashable
        allowed = settings_of(cls)
        attrs = [[k, self.value(v)] for k, v in vars(m).items() if k in allowed and _plain(v)]
        recorders = []
        for hook in m._forward_pre_hooks.values():
            if type(hook) is BatchSizes:
                recorders.append([int(x) for x in hook.sizes])
            elif self.strict:
                raise TypeError(f"a forward pre-hook ({hook!r}) on a {type(m).__name__} cannot cross "
                                "the grading boundary; record with grader.contract.harness.BatchSizes")
        if self.strict and (m._forward_hooks or m._backward_hooks):
            raise TypeError(f"hooks on a {type(m).__name__} cannot cross the grading boundary")
        return {
            "k": "module", "cls": _class_path(type(m)), "training": bool(m.training), "attrs": attrs,
            "recorders": recorders,
            "params": [[k, None if p is None else self.ref(p)] for k, p in m._parameters.items()],
            "buffers": [[k, None if b is None else self.ref(b)] for k, b in m._buffers.items()],
            "children": [[k, None if c is None else self.value(c)] for k, c in m._modules.items()],
        }

    def _optimizer(self, opt: torch.optim.Optimizer) -> dict[str, Any]:
        self.optimizers += 1
        groups = []
        for group in opt.param_groups:
            groups.append({"params": [self.ref(p) for p in group["params"]],
                           "options": self.value({k: v for k, v in group.items() if k != "params"})})
        return {"k": "optim", "cls": _class_path(type(opt)), "defaults": self.value(dict(opt.defaults)),
                "groups": groups,
                "state": [[self.ref(p), self.value(dict(s))] for p, s in opt.state.items()]}

    def _opaque(self, v: Any, why: str) -> dict[str, Any]:
        name = f"{type(v).__module__}.{type(v).__qualname__}"
        if self.strict:
            raise TypeError(f"a {name} {why}")
        try:
            text = repr(v)[:200]
        except Exception:  # noqa: BLE001 - a student's __repr__ may raise
            text = "(its repr raised)"
        return {"opaque": name, "text": text}


# Settings a torch.nn module keeps that are neither constructor arguments nor constants.
_DERIVED_SETTINGS: dict[str, tuple[str, ...]] = {
    "_ConvNd": ("transposed", "_reversed_padding_repeated_twice"),
}


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


def _is_torch_class(v: Any, base: type, prefix: str) -> bool:
    return isinstance(v, base) and type(v).__module__.startswith(prefix)


def _plain(v: Any, depth: int = 0) -> bool:
    if v is None or type(v) in (bool, int, float, str):
        return True
    if type(v) in (tuple, list) and depth < 4:
        return all(_plain(x, depth + 1) for x in v)
    return False


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _region(t: torch.Tensor) -> tuple[str, int, int] | None:
    """(device, first byte, end byte) of the memory ``t``'s elements lie in, read through
    torch's C methods; None for a tensor with no elements."""
    span = _span(_size(t), _stride(t))
    if not span:
        return None
    size = _element_size(t)
    start = _storage_ptr(_untyped_storage(t)) + _storage_offset(t) * size
    return str(t.device), start, start + span * size


def _span(shape: Sequence[int], stride: Sequence[int]) -> int:
    """Storage elements a strided tensor touches (0 when it is empty)."""
    if 0 in shape:
        return 0
    span = 1
    for size, step in zip(shape, stride):
        span += (size - 1) * step
    return span


# ---------------------------------------------------------------- decoding

@dataclass
class Decoded:
    """A decoded message's value tree and its object table, in table order."""

    objects: list[Any]


class Decoder:
    """Rebuilds values from a header and payload, checking every tensor.

    ``known`` are this side's objects for the first table entries (the ones it
    sent): every such entry says what the object holds now (its bytes: nothing is
    taken as "unchanged" on the sender's word), and is written into it
    (``write_back``) instead of making a new one; a tensor entry that is a ``view``
    of one of them is rebuilt in its memory (``_view``).
    ``device`` moves rebuilt tensors to the device they came from, if it exists here.
    """

    def __init__(self, objects: object, payload: bytearray | memoryview, *, known: Sequence[Any] = (),
                 write_back: Callable[[Any, Any], None] | None = None,
                 recorder: Callable[[int], Any] | None = None, trusted: bool = False):
        """``recorder(i)``: the hook to put on module ``i`` where the sender had a recorder
        (a worker's hook reports to the grader); without it, recorders are not rebuilt.
        ``trusted``: the message is the grader's own (a worker reading its request), so its
        modules are rebuilt as they are; otherwise each must be plausible beside ``known``
        (``_Plausible``)."""
        self._plausible: _Plausible | None = None if trusted else _Plausible.of(known)
        if not isinstance(objects, list):
            raise WireError("the object table is not a list")
        self._entries = objects
        self._payload = payload
        self._buffer_offsets = _offsets(payload, objects)
        self._known = list(known)
        if len(objects) < len(self._known):
            raise WireError(f"the answer describes {len(objects)} objects of the "
                            f"{len(self._known)} it was sent")
        self._returned: dict[int, torch.Tensor] = {}  # a known tensor as it came back
        self._write_back = write_back
        self._recorder = recorder
        self.objects: list[Any] = [_UNBUILT] * len(objects)

    def all_objects(self) -> list[Any]:
        for i in range(len(self._entries)):
            self.obj(i)
        return self.objects

    def value(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is list:
            return [self.value(x, depth + 1) for x in node]
        if type(node) is not dict or (len(node) != 1 and "opaque" not in node):
            raise WireError(f"unexpected value node {str(node)[:80]}")
        (tag, body), *_ = node.items()
        if tag == "tuple":
            return tuple(self.value(x, depth + 1) for x in _list(body))
        if tag == "dict":
            out = {}
            for pair in _list(body):
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("a dict entry is not a [key, value] pair")
                key = self.value(pair[0], depth + 1)
                try:
                    out[key] = self.value(pair[1], depth + 1)
                except TypeError:
                    raise WireError("a dict key is not hashable") from None
            return out
        if tag == "float":
            if body not in ("nan", "inf", "-inf"):
                raise WireError(f"bad float {body!r}")
            return float(body)
        if tag == "size":
            sizes = [_int(x) for x in _list(body)]
            if len(sizes) > MAX_DIMS or not all(0 <= x < 2**63 for x in sizes):
                raise WireError(f"bad size {str(sizes)[:80]}")  # torch.Size takes them, its repr does not
            return torch.Size(sizes)
        if tag == "dtype":
            if body not in DTYPES:
                raise WireError(f"dtype {body!r} is not allowed")
            return DTYPES[body]
        if tag == "device":
            if not isinstance(body, str) or body.split(":")[0] not in ("cpu", "cuda"):
                raise WireError(f"device {body!r} is not allowed")
            return torch.device(body)
        if tag == "obj":
            return self.obj(_int(body))
        if tag == "opaque":
            return Opaque(str(node.get("opaque"))[:200], str(node.get("text", ""))[:200])
        raise WireError(f"unknown tag {tag!r}")

    def obj(self, i: int) -> Any:
        if not 0 <= i < len(self._entries):
            raise WireError(f"object {i} is not in the table")
        built = self.objects[i]
        if built is _BUILDING:
            raise WireError(f"object {i} refers to itself")
        if built is not _UNBUILT:
            return built
        self.objects[i] = _BUILDING
        entry = self._entries[i]
        if type(entry) is not dict:
            raise WireError(f"object {i} is not described")
        known = self._known[i] if i < len(self._known) else None
        new: torch.Tensor | torch.nn.Module | torch.optim.Optimizer
        if entry.get("k") == "tensor":
            new = self._tensor(entry)
        elif entry.get("k") == "module":
            new = self._module(entry, i)
        elif entry.get("k") == "optim":
            new = self._optimizer(entry)
        else:
            raise WireError(f"object {i} has unknown kind {entry.get('k')!r}")
        if isinstance(new, torch.Tensor) and isinstance(known, torch.Tensor):
            self._returned[i] = new
        if known is not None and self._write_back is not None:
            self._write_back(known, new)
            new = known
        self.objects[i] = new
        return new

    def _tensor(self, e: dict[str, Any]) -> torch.Tensor:
        dtype = DTYPES.get(e.get("dtype"))  # type: ignore[arg-type]
        if dtype is None:
            raise WireError(f"tensor dtype {e.get('dtype')!r} is not allowed")
        shape, stride = [_int(x) for x in _list(e.get("shape"))], [_int(x) for x in _list(e.get("stride"))]
        if len(shape) > MAX_DIMS or len(stride) != len(shape) or min(shape + stride, default=0) < 0:
            raise WireError(f"bad tensor shape {shape} / strides {stride}")
        if "view" in e:
            t = self._view(e["view"], dtype, shape, stride, e.get("device"))
        else:
            t = self._bytes(e, dtype, shape, stride)
        if e.get("param"):
            t = torch.nn.Parameter(t, requires_grad=bool(e.get("rg")))
        elif e.get("rg") and (dtype.is_floating_point or dtype.is_complex):
            t.requires_grad_(True)
        if "grad" in e:
            grad = self.value(e["grad"])
            if not isinstance(grad, torch.Tensor) or grad.shape != t.shape or grad.dtype != t.dtype:
                raise WireError("a gradient does not match its tensor's shape and dtype")
            t.grad = grad
        return t

    def _bytes(self, e: dict[str, Any], dtype: torch.dtype, shape: list[int],
               stride: list[int]) -> torch.Tensor:
        """A tensor over its own bytes in the payload."""
        span = _span(shape, stride)
        itemsize = dtype.itemsize
        nbytes = _int(e.get("nbytes"))
        if nbytes != span * itemsize:
            raise WireError(f"tensor of shape {shape}, strides {stride}: {nbytes} bytes "
                            f"announced, {span * itemsize} needed")
        if nbytes > MAX_PAYLOAD_BYTES:
            raise WireError(f"a tensor of {nbytes / 2**20:.0f} MiB is over the limit")
        t: torch.Tensor
        if span == 0:
            t = torch.empty_strided(shape, stride, dtype=dtype)
        else:
            start = self._buffer_offsets.get(_int(e.get("buf")))
            if start is None or start + nbytes > len(self._payload):
                raise WireError("a tensor's bytes are not in the payload")
            flat = torch.frombuffer(self._payload, dtype=dtype, count=span, offset=start)
            t = torch.empty(0, dtype=dtype).set_(flat.untyped_storage(), 0, shape, stride)
        if e.get("device") == "cuda":
            if not torch.cuda.is_available():  # never quietly on the CPU: a test asked for the GPU
                raise WireError("a CUDA tensor, where this process has no CUDA device")
            t = t.cuda()
        return t

    def _view(self, v: Any, dtype: torch.dtype, shape: list[int], stride: list[int],
              device: Any) -> torch.Tensor:
        """A tensor in the memory of known tensor ``v["of"]``, ``v["offset"]`` bytes into
        the bytes that came back for it, rebuilt in this side's copy of it after its
        write-back (in-process, the answer is a view of the caller's tensor, which the
        argument guard has restored by then). Where that copy no longer has the layout
        that came back (a reshaped argument the spec lets change, written back as a new
        tensor, or one it does not, left as it was), in the copy that came back."""
        if type(v) is not dict:
            raise WireError("a view is not described")
        j, offset = _int(v.get("of")), _int(v.get("offset"))
        if not 0 <= j < len(self._known) or not isinstance(self._known[j], torch.Tensor):
            raise WireError(f"a view of object {j}, which is no tensor this side sent")
        base = self.obj(j)
        returned = self._returned.get(j)
        if returned is None or not isinstance(base, torch.Tensor):
            raise WireError(f"a view of object {j}, which came back as no tensor")
        room = _span(returned.shape, returned.stride()) * returned.element_size()
        nbytes = _span(shape, stride) * dtype.itemsize
        if not nbytes or offset < 0 or offset + nbytes > room:
            raise WireError(f"a view of {nbytes} bytes at {offset} in an argument of {room} bytes")
        same = (base.dtype, base.shape, base.stride()) == (returned.dtype, returned.shape, returned.stride())
        home = base if same else returned
        if home.device.type != device:
            raise WireError(f"a {device} view of a {home.device.type} tensor")
        start = home.storage_offset() * home.element_size() + offset
        if start % dtype.itemsize:
            raise WireError(f"a {dtype} view at byte {start}, not a multiple of its element size")
        t = torch.empty(0, dtype=dtype, device=home.device)
        t.set_(home.untyped_storage(), start // dtype.itemsize, shape, stride)
        if v.get("neg"):
            t = torch._neg_view(t)
        if v.get("conj"):
            t = t.conj()
        return t

    def _module(self, e: dict[str, Any], i: int) -> torch.nn.Module:
        cls = _allowed_class(e.get("cls"), torch.nn.Module, "torch.nn.")
        m = cls.__new__(cls)
        torch.nn.Module.__init__(m)
        plain: type = cls  # a plain type: mypy takes no torch class object for functools.cache's Hashable
        allowed = settings_of(plain)
        for name, node in _pairs(e.get("attrs")):
            if name not in allowed:
                raise WireError(f"a {cls.__name__} came back with an attribute {name!r}, which is "
                                f"not one of its settings ({', '.join(sorted(allowed))})")
            value = self.value(node)
            if not _plain(value):  # a setting is a number, a string or a tuple of them, never code
                raise WireError(f"the {cls.__name__} setting {name!r} holds a {type(value).__name__}")
            m.__dict__[name] = value
        m.training = bool(e.get("training"))
        for _ in _list(e.get("recorders", [])):
            if self._recorder is not None:
                m.register_forward_pre_hook(self._recorder(i))
        for name, ref in _pairs(e.get("params")):
            p = None if ref is None else self.obj(_int(ref))
            if p is not None and type(p) is not torch.nn.Parameter:
                raise WireError(f"module parameter {name!r} is not a Parameter")
            m._parameters[name] = p
        for name, ref in _pairs(e.get("buffers")):
            b = None if ref is None else self.obj(_int(ref))
            if b is not None and not isinstance(b, torch.Tensor):
                raise WireError(f"module buffer {name!r} is not a tensor")
            m._buffers[name] = b
        for name, node in _pairs(e.get("children")):
            child = self.value(node)
            if child is not None and not isinstance(child, torch.nn.Module):
                raise WireError(f"module child {name!r} is not a module")
            m._modules[name] = child
        if self._plausible is not None:
            self._plausible.check(m, cls.__name__, {id(t) for t in self._known})
        return m

    def _optimizer(self, e: dict[str, Any]) -> torch.optim.Optimizer:
        cls = _allowed_class(e.get("cls"), torch.optim.Optimizer, "torch.optim.")
        defaults = self.value(e.get("defaults"))
        groups = []
        for group in _list(e.get("groups")):
            if type(group) is not dict:
                raise WireError("an optimizer group is not an object")
            options = self.value(group.get("options"))
            if type(options) is not dict or type(defaults) is not dict:
                raise WireError("optimizer options are not a dict")
            params = [self.obj(_int(r)) for r in _list(group.get("params"))]
            groups.append({**options, "params": params})
        opt = cls.__new__(cls)
        torch.optim.Optimizer.__init__(opt, groups, defaults)
        for ref, node in _list_of_pairs(e.get("state")):
            state = self.value(node)
            if type(state) is not dict:
                raise WireError("an optimizer state is not a dict")
            opt.state[self.obj(_int(ref))] = state
        return opt


_UNBUILT, _BUILDING = object(), object()

# A module rebuilt from a worker's answer is built, and may be run, in the grader: its
# settings and sizes must be plausible beside what the grader sent (``_Plausible``).
MODULE_SCALE = 4  # a setting, or all modules' elements, up to this many times the sent ones
MODULE_SETTING_FLOOR = 16  # settings up to this are plausible whatever was sent
MODULE_ELEMENT_FLOOR = 4096  # and this many parameter and buffer elements in all


class _Plausible:
    """What an untrusted answer's modules may hold, judged against the objects the grader
    sent (``known``), with no list of drills: every number among a module's settings at
    most ``MODULE_SCALE`` times the largest setting or tensor size sent (or
    ``MODULE_SETTING_FLOOR``), unless it is one the grader's own modules carry; the
    parameters and buffers of all its modules together at most ``MODULE_SCALE`` times the
    elements sent (or ``MODULE_ELEMENT_FLOOR``); and every new parameter or buffer dense
    and non-overlapping (a stride-0 weight claims elements it does not carry).

    A correct answer never needs more: a drill that returns a module builds it from the
    modules and tensors it was given. What a property then runs in the grader (a returned
    conv's forward) costs at most what those bounds allow, with a few elements of
    parameters, never a 4096-channel conv over one stored number and a huge padding,
    which no SIGALRM could interrupt."""

    def __init__(self, numbers: frozenset[float], largest: float, elements: int):
        self.numbers = numbers
        self.setting = max(float(MODULE_SETTING_FLOOR), MODULE_SCALE * largest)
        self.elements = max(MODULE_ELEMENT_FLOOR, MODULE_SCALE * elements)
        self.counted: set[int] = set()  # parameters and buffers counted so far
        self.held = 0

    @classmethod
    def of(cls, known: Sequence[Any]) -> _Plausible:
        numbers: set[float] = set()
        elements = 0
        for obj in known:
            if isinstance(obj, torch.Tensor):
                numbers.update(obj.shape)
                elements += obj.numel()
            elif isinstance(obj, torch.nn.Module):
                plain: type = type(obj)
                allowed = settings_of(plain)
                for name, value in vars(obj).items():
                    if name in allowed and _plain(value):
                        numbers.update(_numbers(value))
        finite = [abs(n) for n in numbers if math.isfinite(n)]
        return cls(frozenset(numbers), max(finite, default=0.0), elements)

    def check(self, m: torch.nn.Module, name: str, known: set[int]) -> None:
        """Refuse ``m`` (a ``name``) unless it is plausible; count its elements."""
        plain: type = type(m)  # a plain type, for functools.cache's Hashable (as in _module)
        allowed = settings_of(plain)
        for setting, value in vars(m).items():
            if setting in allowed:
                for n in _numbers(value):
                    if n not in self.numbers and not abs(n) <= self.setting:
                        raise WireError(
                            f"a {name} came back with {setting}={value!r}: over {self.setting:g}, the "
                            f"larger of {MODULE_SETTING_FLOOR} and {MODULE_SCALE} times the largest "
                            "setting or size the grader sent (no drill's answer is bigger than what "
                            "it was given)")
        for kind, tensors in (("parameter", m._parameters), ("buffer", m._buffers)):
            for tname, t in tensors.items():
                if t is None or id(t) in self.counted:
                    continue
                if id(t) not in known and not _dense(list(t.shape), list(t.stride())):
                    raise WireError(f"the {name} {kind} {tname!r} (shape {list(t.shape)}, strides "
                                    f"{list(t.stride())}) overlaps itself or has gaps: a module's "
                                    "parameters and buffers must be dense")
                self.counted.add(id(t))
                self.held += t.numel()
        if self.held > self.elements:
            raise WireError(f"the answer's modules hold {self.held} parameter and buffer elements: "
                            f"over {self.elements}, the larger of {MODULE_ELEMENT_FLOOR} and "
                            f"{MODULE_SCALE} times what the grader sent")


def _numbers(value: Any) -> list[float]:
    """The numbers in a plain setting (``_plain``): ints and floats, never bools."""
    if type(value) in (int, float):
        return [value]
    if type(value) in (tuple, list):
        return [n for v in value for n in _numbers(v)]
    return []


def _dense(shape: list[int], stride: list[int]) -> bool:
    """Whether a strided layout covers its span exactly once: some order of its dims is
    contiguous (an empty tensor is)."""
    if 0 in shape:
        return True
    expected = 1
    for step, size in sorted((st, sz) for sz, st in zip(shape, stride) if sz != 1):
        if step != expected:
            return False
        expected *= size
    return True


def _offsets(payload: bytearray | memoryview, objects: list[Any]) -> dict[int, int]:
    """Payload offset of every buffer, in order, as ``send`` laid them out. Every
    tensor is an entry of the object table (gradients refer to theirs by index)."""
    sizes: dict[int, int] = {}
    for entry in objects:
        if type(entry) is dict and entry.get("k") == "tensor" and "buf" in entry:
            sizes[_int(entry["buf"])] = _int(entry.get("nbytes"))
    offsets, pos = {}, 0
    for index in range(len(sizes)):
        if index not in sizes:
            raise WireError("tensor buffers are not numbered 0..n-1")
        pos += -pos % _ALIGN
        offsets[index] = pos
        pos += sizes[index]
    if pos != len(payload):
        raise WireError(f"the payload holds {len(payload)} bytes, the tensors describe {pos}")
    return offsets


def _allowed_class(path: Any, base: type[_C], prefix: str) -> type[_C]:
    if not isinstance(path, str) or ":" not in path:
        raise WireError(f"bad class name {str(path)[:80]!r}")
    module_name, qualname = path.split(":", 1)
    if not module_name.startswith(prefix):
        raise WireError(f"class {path} is not from {prefix.rstrip('.')}")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise WireError(f"unknown class {path}") from None
    if not (isinstance(obj, type) and issubclass(obj, base)):
        raise WireError(f"{path} is not a {base.__name__}")
    return obj


def _int(x: Any) -> int:
    if type(x) is not int:
        raise WireError(f"expected an integer, got {str(x)[:40]!r}")
    return x


def _list(x: Any) -> list[Any]:
    if type(x) is not list:
        raise WireError(f"expected a list, got {str(x)[:40]!r}")
    return x


def _list_of_pairs(x: Any) -> list[tuple[Any, Any]]:
    out = []
    for pair in _list(x):
        if type(pair) is not list or len(pair) != 2:
            raise WireError("expected [key, value] pairs")
        out.append((pair[0], pair[1]))
    return out


def _pairs(x: Any) -> list[tuple[str, Any]]:
    out = []
    for name, v in _list_of_pairs(x):
        if type(name) is not str:
            raise WireError("expected a name")
        out.append((name, v))
    return out


# ---------------------------------------------------------------- write-back

def write_values(original: torch.Tensor, new: torch.Tensor) -> None:
    """Make the grader's tensor hold the values of the worker's copy."""
    with torch.no_grad():
        try:
            if new.shape != original.shape or new.dtype != original.dtype:
                raise RuntimeError("reshaped")
            original.copy_(new)
        except RuntimeError:  # reshaped, or an expanded tensor copy_ cannot write
            original.data = new.to(original.device)


def write_grad(original: torch.Tensor, new: torch.Tensor) -> None:
    original.grad = None if new.grad is None else new.grad.to(original.device)


def module_changed(original: torch.nn.Module, new: torch.nn.Module) -> bool:
    """Its training mode, or a parameter replaced by another."""
    return original.training != new.training or any(
        name in original._parameters and p is not original._parameters[name]
        for name, p in new._parameters.items())


def optimizer_changed(original: torch.optim.Optimizer, new: Any) -> bool:
    if not isinstance(new, torch.optim.Optimizer) or len(new.param_groups) != len(original.param_groups):
        return True
    if any({k: v for k, v in a.items() if k != "params"} != {k: v for k, v in b.items() if k != "params"}
           for a, b in zip(original.param_groups, new.param_groups)):
        return True
    return not same_state(dict(original.state), dict(new.state))


def write_back(original: Any, new: Any) -> None:
    """Make the grader's ``original`` hold what the worker's copy ``new`` holds."""
    if isinstance(original, torch.Tensor):
        if not isinstance(new, torch.Tensor):
            raise WireError("a tensor came back as something else")
        write_values(original, new)
        if original.is_leaf:
            write_grad(original, new)
            if original.dtype.is_floating_point or original.dtype.is_complex:
                original.requires_grad_(new.requires_grad)
    elif isinstance(original, torch.nn.Module):
        if not isinstance(new, torch.nn.Module):
            raise WireError("a module came back as something else")
        original.train(new.training)
        for name, p in new._parameters.items():
            if name in original._parameters and p is not original._parameters[name]:
                original._parameters[name] = p  # the student replaced a parameter
    elif isinstance(original, torch.optim.Optimizer):
        if not isinstance(new, torch.optim.Optimizer) or len(new.param_groups) != len(original.param_groups):
            raise WireError("an optimizer came back changed beyond recognition")
        for old_group, new_group in zip(original.param_groups, new.param_groups):
            old_group.update({k: v for k, v in new_group.items() if k != "params"})
        original.state.clear()
        original.state.update(new.state)
