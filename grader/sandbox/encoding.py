"""Making a wire message (``grader.sandbox.wire``): values to a JSON tree, an object
table and byte buffers. Both sides encode: the grader its requests, the worker its
answers, where an answer tensor that lies in an argument's memory is found through
torch's C methods taken when this module is imported, before any submission code, and
sent as a view of that argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from grader.contract.harness import BatchSizes
from grader.sandbox.wire import (
    DTYPES,
    MAX_DEPTH,
    MAX_PAYLOAD_BYTES,
    LeftBehind,
    WireError,
    is_plain,
    settings_of,
    storage_span,
    transient_buffers,
)

_DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
# Where a tensor's elements live, read through torch's C types, which no Python code can
# patch ("immutable type"): taken at import, before a worker loads any submission.
_untyped_storage = torch._C.TensorBase.untyped_storage
_storage_offset = torch._C.TensorBase.storage_offset
_element_size = torch._C.TensorBase.element_size
_size = torch._C.TensorBase.size
_stride = torch._C.TensorBase.stride
_is_conj = torch._C.TensorBase.is_conj
_is_neg = torch._C.TensorBase.is_neg
_numpy = torch._C.TensorBase.numpy  # Tensor.numpy is refused in a drill that forbids anything,
_unguarded = torch._C.DisableTorchFunction  # and a rank's collective encodes inside its guarded call
_storage_ptr = torch._C.StorageBase.data_ptr  # type: ignore[attr-defined]  # not in torch's stubs
# A module's hook tables, read the same way (``_hooks_held``): its instance dict through
# object's own lookup (a class cannot rebind its ``__dict__``), the tables' sizes through
# dict's C methods, whatever a submission does to Module, its subclasses or the builtins.
_instance_attribute = object.__getattribute__
_dict_get = dict.get
_dict_len = dict.__len__
_type_of, _is_subclass = type, issubclass
_HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks")


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
        span = storage_span(shape, stride)
        out["nbytes"] = span * data.element_size()
        self.payload_bytes += out["nbytes"]
        if self.payload_bytes > MAX_PAYLOAD_BYTES:  # refused before a byte is copied
            raise WireError(f"the answer would hold {self.payload_bytes / 2**20:.0f} MiB of tensor "
                            f"data (limit {MAX_PAYLOAD_BYTES / 2**20:.0f} MiB)")
        if span:
            flat = torch.as_strided(data, (span,), (1,), data.storage_offset()).contiguous()
            # numpy's stubs give ndarray its __buffer__ only from Python 3.12 (mypy checks as 3.11)
            with _unguarded():
                self.buffers.append(memoryview(_numpy(flat.view(torch.uint8))))  # type: ignore[arg-type]
            out["buf"] = len(self.buffers) - 1
        self._grad(t, out)
        return out

    def _module(self, m: torch.nn.Module) -> dict[str, Any]:
        cls: type = type(m)  # a plain type: mypy takes no torch class object for functools.cache's Hashable
        allowed = settings_of(cls)
        attrs = [[k, self.value(v)] for k, v in vars(m).items() if k in allowed and is_plain(v)]
        recorders = []
        for hook in m._forward_pre_hooks.values():
            if type(hook) is BatchSizes:
                recorders.append([int(x) for x in hook.sizes])
            elif self.strict and type(hook) is not LeftBehind:
                raise TypeError(f"a forward pre-hook ({hook!r}) on a {type(m).__name__} cannot cross "
                                "the grading boundary; record with grader.contract.harness.BatchSizes")
        if self.strict and (any(type(h) is not LeftBehind for h in m._forward_hooks.values())
                            or m._backward_hooks):
            raise TypeError(f"hooks on a {type(m).__name__} cannot cross the grading boundary")
        held = {} if self.strict else _hooks_held(m)  # the worker says what a call left on it
        return {
            "k": "module", "cls": _class_path(type(m)), "training": bool(m.training), "attrs": attrs,
            "recorders": recorders, **held,
            "params": [[k, None if p is None else self.ref(p)] for k, p in m._parameters.items()],
            "buffers": [[k, None if b is None else self.ref(b)] for k, b in m._buffers.items()],
            **_transient(m),
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

def _is_torch_class(v: Any, base: type, prefix: str) -> bool:
    return isinstance(v, base) and type(v).__module__.startswith(prefix)



def _transient(m: torch.nn.Module) -> dict[str, Any]:
    """``{"transient": [names]}`` (``wire.transient_buffers``), or nothing when ``m`` keeps
    no buffer out of its ``state_dict``."""
    names = transient_buffers(m)
    return {"transient": names} if names else {}


def _hooks_held(m: torch.nn.Module) -> dict[str, list[int]]:
    """``{"hooks": [forward hooks, forward pre-hooks]}``: how many entries ``m``'s tables
    hold (the recorders the grader put there included), or nothing when both are empty.
    Read through references taken at import, before any submission code: a table that
    is no dict counts as one hook left."""
    own = _instance_attribute(m, "__dict__")
    counts = []
    for name in _HOOK_TABLES:
        table: Any = _dict_get(own, name)
        counts.append(_dict_len(table) if _is_subclass(_type_of(table), dict) else 1)
    return {"hooks": counts} if counts[0] or counts[1] else {}


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _region(t: torch.Tensor) -> tuple[str, int, int] | None:
    """(device, first byte, end byte) of the memory ``t``'s elements lie in, read through
    torch's C methods; None for a tensor with no elements."""
    span = storage_span(_size(t), _stride(t))
    if not span:
        return None
    size = _element_size(t)
    start = _storage_ptr(_untyped_storage(t)) + _storage_offset(t) * size
    return str(t.device), start, start + span * size
