"""Reading a wire message (``grader.sandbox.wire``) into exact torch objects, checking
every part: what a worker answers is believed only as far as this module checks it.

Kept in one file past the sandbox's usual size on purpose: this is the grader's whole
acceptance of untrusted data (tensor layouts against the payload, views against the
arguments they claim, module classes and settings against an allowlist and against
what was sent, recorders, optimizers), and a security review must read it in one
place, as one reading of one message.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

from grader.contract.harness import BatchSizes
from grader.sandbox.wire import (
    ALIGN,
    DTYPES,
    MAX_DEPTH,
    MAX_DIMS,
    MAX_ELEMENTS,
    MAX_LEFT_HOOKS,
    MAX_PAYLOAD_BYTES,
    LeftBehind,
    Opaque,
    WireError,
    is_plain,
    settings_of,
    storage_span,
)

_C = TypeVar("_C")  # the torch class a message may name: Module or Optimizer


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
        if self._plausible is not None and len(payload) > self._plausible.payload:
            raise WireError(f"the answer carries {len(payload) / 2**20:.1f} MiB of tensor data: over "
                            f"{self._plausible.payload / 2**20:.1f} MiB, what it was sent back plus the larger of "
                            f"{ANSWER_FLOOR_BYTES // 2**20} MiB and {ANSWER_SCALE} times that (a failed "
                            "property's answer may live until its test ends)")
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
        if isinstance(known, torch.nn.Module) and self._write_back is not None:
            _mirror_left_hooks(known, entry.get("hooks", [0, 0]))
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
        if math.prod(shape) > MAX_ELEMENTS:
            raise WireError(f"a tensor of shape {shape} has {math.prod(shape)} elements, over the "
                            f"limit of {MAX_ELEMENTS} (no drill's answer is near it)")
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
        span = storage_span(shape, stride)
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
        room = storage_span(returned.shape, returned.stride()) * returned.element_size()
        nbytes = storage_span(shape, stride) * dtype.itemsize
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
            if not is_plain(value):  # a setting is a number, a string or a tuple of them, never code
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
        transient = _list(e.get("transient", []))
        if any(type(name) is not str or name not in m._buffers for name in transient):
            raise WireError(f"a {cls.__name__} came back with a non-persistent buffer that is not one of its "
                            f"buffers: {str(transient)[:80]}")
        m._non_persistent_buffers_set = set(transient)
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
MODULE_COUNT_FLOOR = 64  # and this many modules (submodules included) in one answer
# An answer's tensor bytes: what was sent (it comes back), plus the larger of these. A drill's
# answers are tiny; a 60 MiB one, kept alive by the failures hypothesis holds, took the grader to 0.9 GB.
ANSWER_FLOOR_BYTES = 8 * 2**20
ANSWER_SCALE = 16


class _Plausible:
    """What an untrusted answer's modules may hold, judged against the objects the grader
    sent (``known``), with no list of drills: every number among a module's settings at
    most ``MODULE_SCALE`` times the largest setting or tensor size sent (or
    ``MODULE_SETTING_FLOOR``), unless it is one the grader's own modules carry; the
    parameters and buffers of all its modules together at most ``MODULE_SCALE`` times the
    elements sent (or ``MODULE_ELEMENT_FLOOR``); its modules at most ``MODULE_SCALE``
    times the modules sent (or ``MODULE_COUNT_FLOOR``: 60,000 empty modules cost the
    grader gigabytes); and every new parameter or buffer dense and non-overlapping (a
    stride-0 weight claims elements it does not carry).

    A correct answer never needs more: a drill that returns a module builds it from the
    modules and tensors it was given. What a property then runs in the grader (a returned
    conv's forward) costs at most what those bounds allow, with a few elements of
    parameters, never a 4096-channel conv over one stored number and a huge padding,
    which no SIGALRM could interrupt."""

    def __init__(self, numbers: frozenset[float], largest: float, elements: int, modules: int = 0,
                 sent_bytes: int = 0):
        self.numbers = numbers
        self.setting = max(float(MODULE_SETTING_FLOOR), MODULE_SCALE * largest)
        self.elements = max(MODULE_ELEMENT_FLOOR, MODULE_SCALE * elements)
        self.modules = max(MODULE_COUNT_FLOOR, MODULE_SCALE * modules)
        self.payload = sent_bytes + max(ANSWER_FLOOR_BYTES, ANSWER_SCALE * sent_bytes)
        self.counted: set[int] = set()  # parameters and buffers counted so far
        self.held = 0
        self.built = 0  # modules checked so far

    @classmethod
    def of(cls, known: Sequence[Any]) -> _Plausible:
        numbers: set[float] = set()
        elements = modules = sent_bytes = 0
        for obj in known:
            if isinstance(obj, torch.Tensor):
                numbers.update(obj.shape)
                elements += obj.numel()
                sent_bytes += obj.numel() * obj.element_size()
            elif isinstance(obj, torch.nn.Module):
                modules += 1
                plain: type = type(obj)
                allowed = settings_of(plain)
                for name, value in vars(obj).items():
                    if name in allowed and is_plain(value):
                        numbers.update(_numbers(value))
        finite = [abs(n) for n in numbers if math.isfinite(n)]
        return cls(frozenset(numbers), max(finite, default=0.0), elements, modules, sent_bytes)

    def check(self, m: torch.nn.Module, name: str, known: set[int]) -> None:
        """Refuse ``m`` (a ``name``) unless it is plausible; count it and its elements."""
        self.built += 1
        if self.built > self.modules:
            raise WireError(f"the answer holds over {self.modules} modules, the larger of "
                            f"{MODULE_COUNT_FLOOR} and {MODULE_SCALE} times the modules the grader sent")
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


def _mirror_left_hooks(module: torch.nn.Module, counts: Any) -> None:
    """Put on the grader's ``module`` one inert ``LeftBehind`` per hook the call left on
    the worker's copy: what its tables held after the call (the worker's encoder counts
    them, ``encoding._hooks_held``) beyond the recorders the grader sent with it (each
    became one pre-hook there). Bounded: past ``MAX_LEFT_HOOKS`` a table says no more."""
    values = _list(counts)
    if len(values) != 2 or not all(type(n) is int and n >= 0 for n in values):
        raise WireError(f"a module's hook counts are not two counts: {str(counts)[:40]}")
    forward, pre = values
    sent = sum(1 for hook in module._forward_pre_hooks.values() if type(hook) is BatchSizes)
    for _ in range(min(forward, MAX_LEFT_HOOKS)):
        module.register_forward_hook(LeftBehind())
    for _ in range(min(max(pre - sent, 0), MAX_LEFT_HOOKS)):
        module.register_forward_pre_hook(LeftBehind())


def _numbers(value: Any) -> list[float]:
    """The numbers in a plain setting (``is_plain``): ints and floats, never bools."""
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
        pos += -pos % ALIGN
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
