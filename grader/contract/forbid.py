"""Refuse forbidden APIs while the student's function runs.

A drill's marker names what it forbids and what to do instead::

    pytest.mark.exercise(points=10, forbid={"F.one_hot": "scatter_ ones into zeros"})

Torch functions and tensor methods are caught by a ``TorchFunctionMode`` (it sees
calls such as ``F.one_hot``, ``Tensor.stride`` and the ``F.batch_norm`` inside
``nn.BatchNorm1d.forward``). Plain Python classes (``DistributedSampler``) are not
visible to the mode, so their ``__init__`` is guarded while a call is in flight.

The student may catch the exception the guard raises; it does not matter, the
guard remembers every use and the grader fails the test afterwards.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard, cast

from torch.overrides import TorchFunctionMode, get_ignored_functions, resolve_name

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
    class it offers (its ``__all__``); the first hint given for a name counts."""
    hints: dict[str, str] = {}
    for name, hint in (forbid or {}).items():
        for member in members(canonical_name(name)):
            hints.setdefault(member, hint)
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
        for n, h in functions.items():
            obj = resolve(n)
            if _unseen_by_mode(obj):
                watched[obj.__code__] = (n, h)
        return _Targets(classes, functions, by_identity, watched)

    @contextmanager
    def guard(self) -> Iterator[list[ForbiddenUse]]:
        """Run the body with every forbidden API refused; yields the uses seen."""
        uses: list[ForbiddenUse] = []
        if not self.hints:
            yield uses
            return
        targets = self._targets
        with _ClassGuard.active(targets.classes, uses), \
                _FunctionMode(targets.functions, targets.by_identity, uses), \
                _CallWatch.active(targets.watched, uses):
            yield uses


@dataclass(frozen=True)
class _Targets:
    classes: dict[str, str]  # name -> hint: refused by patching __init__
    functions: dict[str, str]  # name -> hint: refused by the TorchFunctionMode
    by_identity: dict[int, str]  # id(forbidden object) -> name, for unnamed builtins
    watched: dict[types.CodeType, tuple[str, str]]  # code -> (name, hint): the call watch


class _FunctionMode(TorchFunctionMode):
    def __init__(self, hints: dict[str, str], by_identity: dict[int, str],
                 uses: list[ForbiddenUse]):
        super().__init__()
        self.hints = hints
        self.by_identity = by_identity
        self.uses = uses

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = _name_of(func)
        if name not in self.hints:
            name = self.by_identity.get(id(func), name)
        if name in self.hints:
            self.uses.append(ForbiddenUse(name, self.hints[name]))
            raise ForbiddenAPIError(f"{name} is forbidden in this drill")
        return func(*args, **(kwargs or {}))


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
    student imported the function under.
    """

    @staticmethod
    @contextmanager
    def active(targets: dict[types.CodeType, tuple[str, str]],
               uses: list[ForbiddenUse]) -> Iterator[None]:
        if not targets:
            yield
            return
        previous = sys.getprofile()

        def watch(frame, event, arg):
            if event == "call" and frame.f_code in targets:
                name, hint = targets[frame.f_code]
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
