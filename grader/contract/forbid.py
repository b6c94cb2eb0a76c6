"""Refuse forbidden APIs while the student's function runs.

A drill's marker names what it forbids and what to do instead::

    pytest.mark.exercise(points=10, forbid={"F.one_hot": "scatter_ ones into zeros"})

Torch functions and tensor methods are caught by a ``TorchFunctionMode`` (it sees
calls such as ``F.one_hot``, ``Tensor.stride`` and the ``F.batch_norm`` inside
``nn.BatchNorm1d.forward``). Plain Python classes (``DistributedSampler``) are not
visible to the mode, so their ``__init__`` is guarded while a call is in flight.

The student may catch the exception the guard raises; it does not matter, the
guard remembers every use and the grader fails the test afterwards.

numpy does a forbidden API's work by another name (``np.bincount`` for ``torch.bincount``,
an array's strides for ``Tensor.stride``), so a drill that forbids anything forbids numpy
too: a tensor cannot be handed to it (``NUMPY_BRIDGES``), and numpy's modules refuse their
attributes to a guarded call (``_NumpyGuard``). A function taken from numpy before the call
(``from numpy import bincount``) and fed plain numbers (``Tensor.tolist``) still runs here;
the sandbox's armor refuses numpy's attributes for good, and the static scan flags numpy.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard, cast

import torch
from torch.overrides import TorchFunctionMode, get_ignored_functions, resolve_name

from grader.contract.capabilities import NUMPY_BRIDGES, aten_operators, kernels_of
from grader.core import engine_phrases
from grader.core.i18n import Message

_ALIASES = {"F.": "torch.nn.functional.", "nn.": "torch.nn.", "Tensor.": "torch.Tensor."}


def canonical_name(name: str) -> str:
    """``F.one_hot`` -> ``torch.nn.functional.one_hot`` (and ``nn.``, ``Tensor.``)."""
    for short, full in _ALIASES.items():
        if name.startswith(short):
            return full + name[len(short):]
    return name


@functools.cache  # drills share names (F.conv2d), and each test builds its own Forbidden
def resolve(dotted: str) -> object:
    """The object a dotted name (``torch.nn.functional.one_hot``) names, imported."""
    module_name, _, attr = dotted.rpartition(".")
    while module_name:
        try:
            obj: object = importlib.import_module(module_name)
        except ModuleNotFoundError:
            module_name, _, head = module_name.rpartition(".")
            attr = f"{head}.{attr}"
            continue
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj
    raise ValueError(f"cannot resolve forbidden API {dotted!r}")


def expand(forbid: Mapping[str, str] | None) -> dict[str, str]:
    """Canonical name -> hint for every API the marker ``forbid`` forbids: a module's name
    (``torch.autograd.functional``, ``torch.nested``) stands for each public function and
    class it offers (its ``__all__``); the first hint given for a name counts. A drill that
    forbids anything forbids handing a tensor to numpy too (``NUMPY_BRIDGES``)."""
    hints: dict[str, str] = {}
    for name, hint in (forbid or {}).items():
        for member in members(canonical_name(name)):
            hints.setdefault(member, hint)
    if hints:
        for name in NUMPY_BRIDGES:
            hints.setdefault(name, engine_phrases.NUMPY_INSTEAD)
    return hints


@functools.cache
def members(name: str) -> tuple[str, ...]:
    """``(name,)``, or, for a module, the canonical names of its public functions and classes."""
    try:
        obj = resolve(name)
    except (ValueError, AttributeError, ImportError):
        return (name,)
    if not isinstance(obj, types.ModuleType):
        return (name,)
    public = getattr(obj, "__all__", None) or [n for n in vars(obj) if not n.startswith("_")]
    return tuple(f"{name}.{attr}" for attr in sorted(public)
                 if callable(getattr(obj, attr, None)) and not isinstance(getattr(obj, attr), types.ModuleType))


# A forbidden use, as the learner reads it (the only words a sandbox worker may send as an id
# with a failed assertion: ``grader.sandbox.sandboxed_impl``).
FORBIDDEN = engine_phrases.FORBIDDEN


class ForbiddenAPIError(RuntimeError):
    """Raised inside the student's call when it uses a forbidden API."""


@dataclass
class ForbiddenUse:
    name: str
    hint: str

    def message(self, function: str) -> Message:
        """What the learner reads (the hint is the course's phrase: its drill's translation
        says it in their language)."""
        return Message(FORBIDDEN, {"function": function, "name": self.name, "hint": self.hint})

    def failure(self, function: str) -> AssertionError:
        """The failed property a forbidden use makes, its message kept as an id."""
        said = self.message(function)
        failure = AssertionError(str(said))
        failure.worded = said  # type: ignore[attr-defined]
        return failure


@dataclass
class Forbidden:
    """The forbidden APIs of one drill: canonical name -> hint."""

    hints: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_marker(cls, forbid: Mapping[str, str] | None) -> Forbidden:
        return cls(expand(forbid))

    @functools.cached_property
    def _targets(self) -> _Targets:
        """How each forbidden API is caught: worked out once, not on every guarded call."""
        classes = {n: h for n, h in self.hints.items() if isinstance(resolve(n), type)}
        functions = {n: h for n, h in self.hints.items() if n not in classes}
        # Some builtins have no name for resolve_name (torch._C._nn.pad_sequence, the
        # kernel behind torch.nn.utils.rnn.pad_sequence, a plain Python function the
        # mode never sees): recognise the forbidden objects themselves too.
        by_identity: dict[int, str] = {}
        for name in functions:
            by_identity.setdefault(id(resolve(name)), name)
        watched: dict[types.CodeType, tuple[str, str]] = {}
        builtins: dict[tuple[int, str], tuple[str, str]] = {}
        # a forbidden API stands for its operators: torch's functions named after one are refused too
        # (``torch._native_batch_norm_legit_no_training`` where ``F.batch_norm`` is forbidden), as a
        # worker's armor refuses the operators themselves
        operators: dict[str, str] = {}
        for n, h in functions.items():
            obj = resolve(n)
            if _unseen_by_mode(obj):
                watched[obj.__code__] = (n, h)
            elif _builtin_unseen_by_mode(obj):
                builtins[_builtin_key(obj)] = (n, h)
            for op in kernels_of(n):
                if op in aten_operators():  # an operator, not a name by chance (torch.func.grad)
                    operators.setdefault(op, h)
        return _Targets(classes, functions, by_identity, watched, builtins, operators)

    @contextmanager
    def guard(self) -> Iterator[list[ForbiddenUse]]:
        """Run the body with every forbidden API refused; yields the uses seen."""
        uses: list[ForbiddenUse] = []
        if not self.hints:
            yield uses
            return
        targets = self._targets
        with _ClassGuard.active(targets.classes, uses), _NumpyGuard.active(uses), \
                _FunctionMode(targets.functions, targets.by_identity, targets.operators, uses), \
                _CallWatch.active(targets.watched, targets.builtins, uses):
            yield uses


@dataclass(frozen=True)
class _Targets:
    classes: dict[str, str]  # name -> hint: refused by patching __init__
    functions: dict[str, str]  # name -> hint: refused by the TorchFunctionMode
    by_identity: dict[int, str]  # id(forbidden object) -> name, for unnamed builtins
    watched: dict[types.CodeType, tuple[str, str]]  # code -> (name, hint): the call watch
    builtins: dict[tuple[int, str], tuple[str, str]]  # _builtin_key -> (name, hint): the call watch
    operators: dict[str, str]  # an operator's base name (capabilities.kernels_of) -> hint: the mode


class _FunctionMode(TorchFunctionMode):
    def __init__(self, hints: dict[str, str], by_identity: dict[int, str], operators: dict[str, str],
                 uses: list[ForbiddenUse]):
        super().__init__()
        self.hints = hints
        self.by_identity = by_identity
        self.operators = operators
        self.uses = uses

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = _name_of(func)
        if name not in self.hints:
            name = self.by_identity.get(id(func), name)
        hint = self.hints.get(name) if name is not None else None
        if hint is None:
            op = _operator_of(func, name)
            hint = self.operators.get(op) if op is not None else None
        if hint is not None:
            name = name or f"torch.{getattr(func, '__name__', '?')}"
            self.uses.append(ForbiddenUse(name, hint))
            raise ForbiddenAPIError(f"{name} is forbidden in this drill")
        return func(*args, **(kwargs or {}))


def _operator_of(func: object, name: str | None) -> str | None:
    """The operator a torch function is named after: the last part of its name, or of a
    private builtin's that torch cannot name (``torch._native_batch_norm_legit``)."""
    if name is not None:
        return name.rpartition(".")[2] if name.startswith("torch.") else None
    if not isinstance(func, types.BuiltinFunctionType):  # a property's getter (Tensor.grad) names no operator
        return None
    base, home = getattr(func, "__name__", None), getattr(func, "__module__", None)
    return base if isinstance(base, str) and isinstance(home, str) and home.partition(".")[0] == "torch" else None


_NAMES: dict[object, str | None] = {}


def _name_of(func: object) -> str | None:
    """``resolve_name(func)``, remembered. torch runs each call of it inside
    ``warnings.catch_warnings``, dear next to a dict lookup, and the mode asks once
    per torch operation of the guarded call: many times for even a one_hot."""
    try:
        return _NAMES[func]
    except KeyError:
        name = _NAMES[func] = resolve_name(func)
        return name
    except TypeError:  # not hashable: not worth remembering
        return resolve_name(func)


class _CallWatch:
    """Refuse forbidden torch functions that ``__torch_function__`` never sees.

    ``torch.broadcast_shapes`` takes no tensor, so no ``TorchFunctionMode`` hears of
    it (torch lists such functions in ``get_ignored_functions``). A profile hook on
    the calling thread watches for their code being entered, whatever name the
    student imported the function under; and for a call of a forbidden builtin that
    never asks for the protocol (autograd's engine, ``Variable._execution_engine.
    run_backward``), bound to the same object however it was reached.
    """

    @staticmethod
    @contextmanager
    def active(targets: dict[types.CodeType, tuple[str, str]],
               builtins: dict[tuple[int, str], tuple[str, str]],
               uses: list[ForbiddenUse]) -> Iterator[None]:
        if not targets and not builtins:
            yield
            return
        previous = sys.getprofile()
        names = frozenset(name for _, name in builtins)

        def watch(frame, event, arg):
            found = None
            if event == "call":
                found = targets.get(frame.f_code)
            elif event == "c_call" and builtins:
                found = _watched_builtin(arg, builtins, names)
            if found is not None:
                name, hint = found
                uses.append(ForbiddenUse(name, hint))
                raise ForbiddenAPIError(f"{name} is forbidden in this drill")
            if previous is not None:
                previous(frame, event, arg)

        sys.setprofile(watch)
        try:
            yield
        finally:
            sys.setprofile(previous)


def _unseen_by_mode(obj: object) -> TypeGuard[types.FunctionType]:
    """A Python function ``__torch_function__`` cannot see.

    Either torch lists it as ignored (``torch.broadcast_shapes``), or it never asks
    for the torch-function protocol at all: a plain helper such as
    ``torch.nn.utils.fusion.fuse_conv_bn_eval`` has no ``has_torch_function*``
    check in its code. (``get_overridable_functions`` would say it exactly, but
    building it costs over a second per process.)
    """
    if not isinstance(obj, types.FunctionType):
        return False
    if obj in get_ignored_functions():
        return True
    return not any(name.startswith("has_torch_function") for name in obj.__code__.co_names)


# torch's generated bindings of its operators: their builtins ask for ``__torch_function__``
_OPERATOR_HOMES = ("torch._C._VariableFunctions", "torch._C._nn", "torch._C._linalg", "torch._C._special",
                   "torch._C._fft", "torch._C._nested", "torch._C._sparse")


def _builtin_unseen_by_mode(obj: object) -> bool:
    """A C function, or a C method bound or not, that is no operator binding of torch's
    and no tensor method: no ``TorchFunctionMode`` hears of it (``torch._C._to_dlpack``,
    autograd's engine)."""
    if isinstance(obj, types.MethodDescriptorType):
        return not issubclass(obj.__objclass__, torch._C.TensorBase)
    if not isinstance(obj, types.BuiltinFunctionType):
        return False
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, type):
        return False
    return getattr(owner, "__name__", None) not in _OPERATOR_HOMES


def _builtin_key(fn: object) -> tuple[int, str]:
    """What a C function's every binding shares: the object it is bound to (for a method
    not yet bound, its class), and its name."""
    if isinstance(fn, types.MethodDescriptorType):
        return id(fn.__objclass__), fn.__name__
    return id(getattr(fn, "__self__", None)), getattr(fn, "__name__", "")


def _watched_builtin(fn: object, builtins: dict[tuple[int, str], tuple[str, str]],
                     names: frozenset[str]) -> tuple[str, str] | None:
    """The forbidden builtin a C call (``c_call``'s argument) is: bound to that object, or a
    method of that object's class (a second engine of autograd's class is one too)."""
    key = _builtin_key(fn)
    found = builtins.get(key)
    if found is None and key[1] in names:
        for cls in type(getattr(fn, "__self__", None)).__mro__:
            found = builtins.get((id(cls), key[1]))
            if found is not None:
                break
    return found


# Code that may take numpy's attributes inside a guarded call: numpy's and torch's own (a
# module torch imports lazily, ``torch._dynamo.utils``, reads ``np.fft`` as it loads;
# ``DataLoader``, ``torch.load`` and ``assert_close`` read numpy's types), and the import
# system's (which looks a name up before the importing code takes it). A torch function
# that takes an attribute by name for its caller (``torch._utils._import_dotted_name``)
# hands numpy over: the static scan flags the spelling ("numpy" in a string).
_NUMPY_USERS = ("numpy", "torch", "importlib")


def _may_take_numpy(frame: types.FrameType) -> bool:
    """Whether the code of ``frame`` is one of ``_NUMPY_USERS``', by the module whose
    globals it runs in (a submission may set its own ``__name__``)."""
    name = frame.f_globals.get("__name__")
    if not isinstance(name, str) or name.partition(".")[0] not in _NUMPY_USERS:
        return False
    module = sys.modules.get(name)
    try:
        return module is not None and types.ModuleType.__getattribute__(module, "__dict__") is frame.f_globals
    except (TypeError, AttributeError):  # not a module
        return False


class _NumpyModule(types.ModuleType):
    """A numpy module whose attributes a guarded call may not take (``_NumpyGuard``)."""

    def __getattribute__(self, attr: str) -> Any:
        # the frame is read only where a refusal is possible: every numpy lookup comes here
        if (attr == "__dict__" or not attr.startswith("__")) and _NumpyGuard.refusing() \
                and not _may_take_numpy(sys._getframe(1)):
            _NumpyGuard.refuse(types.ModuleType.__getattribute__(self, "__name__"), attr)
        return super().__getattribute__(attr)


_NUMPY_NAME = re.compile(r"numpy(?:\.|$)")


class _NumpyGuard:
    """numpy's modules take a class of ours the first time a call is guarded (and so do
    those loaded later): an attribute taken from one (``np.bincount``,
    ``numpy.lib.stride_tricks``) by a thread whose call is guarded is a forbidden use;
    anyone else gets it as before. ``forever`` refuses them to every thread, for good (the
    sandbox's armor, before the submission is imported)."""

    _lock = threading.Lock()
    _local = threading.local()
    _seen = 0  # len(sys.modules) when numpy's modules were last looked for
    _report: ClassVar[Callable[[str, str], None] | None] = None

    @classmethod
    def refusing(cls) -> bool:
        """Whether this thread's call is guarded, or numpy is refused for good."""
        return cls._report is not None or getattr(cls._local, "uses", None) is not None

    @classmethod
    def refuse(cls, module: str, attr: str) -> None:
        name = f"{module}.{attr}"
        uses = getattr(cls._local, "uses", None)
        if uses is not None:
            uses.append(ForbiddenUse(name, engine_phrases.NUMPY_INSTEAD))
        else:
            assert cls._report is not None  # refusing() said one of them
            cls._report(name, engine_phrases.NUMPY_INSTEAD)
        raise ForbiddenAPIError(f"{name} is forbidden in this drill")

    @classmethod
    def _take_modules(cls) -> None:
        with cls._lock:
            if len(sys.modules) == cls._seen:
                return
            for name in filter(_NUMPY_NAME.match, list(sys.modules)):  # at C speed: it runs on every import
                module = sys.modules.get(name)
                if type(module) is types.ModuleType:
                    module.__class__ = _NumpyModule
            cls._seen = len(sys.modules)

    @classmethod
    @contextmanager
    def active(cls, uses: list[ForbiddenUse]) -> Iterator[None]:
        cls._take_modules()
        previous = getattr(cls._local, "uses", None)
        cls._local.uses = uses
        try:
            yield
        finally:
            cls._local.uses = previous

    @classmethod
    def forever(cls, report: Callable[[str, str], None]) -> None:
        cls._report = report
        cls._take_modules()


refuse_numpy_forever = _NumpyGuard.forever


class _ClassGuard:
    """Reference-counted patch of ``cls.__init__`` for classes a drill forbids.

    Ranks run as threads, so several calls may be guarded at once; the patch is
    installed by the first and removed by the last. Uses are recorded for the
    calls running in the thread that constructs the object.
    """

    _lock = threading.Lock()
    _count: ClassVar[dict[type[Any], int]] = {}
    _original: ClassVar[dict[type[Any], object]] = {}
    _local = threading.local()

    @classmethod
    @contextmanager
    def active(cls, hints: dict[str, str], uses: list[ForbiddenUse]) -> Iterator[None]:
        # hints name classes only (Forbidden._targets keeps the names that resolve to one)
        targets = {cast("type[Any]", resolve(name)): (name, hint) for name, hint in hints.items()}
        previous = getattr(cls._local, "sinks", None)
        cls._local.sinks = (targets, uses)
        with cls._lock:
            for klass in targets:
                if cls._count.get(klass, 0) == 0:
                    cls._original[klass] = klass.__dict__.get("__init__")
                    klass.__init__ = cls._make_refusing_init(klass)
                cls._count[klass] = cls._count.get(klass, 0) + 1
        try:
            yield
        finally:
            cls._local.sinks = previous
            with cls._lock:
                for klass in targets:
                    cls._count[klass] -= 1
                    if cls._count[klass] == 0:
                        original = cls._original.pop(klass)
                        if original is None:
                            del klass.__init__
                        else:
                            klass.__init__ = original

    @classmethod
    def _make_refusing_init(cls, klass: type[Any]) -> Callable[..., None]:
        original = klass.__init__

        def __init__(self, *args, **kwargs):
            sinks = getattr(cls._local, "sinks", None)
            if sinks is not None and klass in sinks[0]:
                name, hint = sinks[0][klass]
                sinks[1].append(ForbiddenUse(name, hint))
                raise ForbiddenAPIError(f"{name} is forbidden in this drill")
            original(self, *args, **kwargs)

        return __init__
