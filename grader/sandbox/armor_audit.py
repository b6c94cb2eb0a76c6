"""The armor's audit hook (``grader.sandbox.armor``): installed last, it cannot be removed,
and it refuses what would reach or rewrite the armor from Python (gc's object walks,
ctypes' memory access, replacing a function's code, writing ``/proc/self/mem``) and, in a
drill that forbids something, what would run the armored files of torch again
(``Sources``: their source, bytecode and folders, and torch's modules with twins the
armor never saw).
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

# torch's files (relative to its folder) that, loaded after the armor went on, would bring
# twins it never saw (``torch._inductor.decomposition`` has its own ``max_pool2d_with_indices``
# and ``_native_layer_norm``; ``fx_passes`` folds batch norms into convolutions): in a drill
# that forbids something they are not opened, so not imported either. Only those: torch's
# references import other parts of ``torch._inductor`` and ``torch._decomp`` as they run
# (whose tables hold backward and random-number decompositions, no forward twin).
_LAZY_TWINS = ("_inductor/decomposition.py", "_inductor/fx_passes")

# gc's walks find any object (the armor's kernels among them); ctypes reads and writes memory
# by address. Foreign calls through ctypes are refused too where no GPU stack needs them.
_REFUSED_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents",
                             "ctypes.addressof", "ctypes.cdata", "ctypes.cdata/buffer",
                             "ctypes.string_at", "ctypes.wstring_at"})
# Links could lead a relative open, whose directory an audit event does not show, into torch.
_LINK_EVENTS = frozenset({"os.symlink", "os.link"})
_CODE_SUFFIXES = (".py", ".pyc")


@functools.cache
def torch_dir() -> tuple[str, str]:
    """torch's package folder as its code objects spell it, and resolved."""
    spelled = os.path.dirname(os.path.abspath(str(torch.__file__)))
    return spelled, os.path.realpath(spelled)


def _resolved(path: str) -> str:
    """``os.path.realpath(path)``, without walking torch's folders again for its own files
    (the folder resolved once, in the zygote; nothing inside a wheel is a link)."""
    spelled, real = torch_dir()
    if path.startswith(spelled + os.sep):
        return real + path[len(spelled):]
    return os.path.realpath(path)


@dataclass(frozen=True)
class Sources:
    """The files whose code the armor replaced (``torch/nn/utils/fusion.py``,
    ``torch/_refs/__init__.py``, ...), resolved.

    Running such a file's source (or bytecode) again makes fresh, unarmored copies of
    its functions, by any route: ``compile(open(f).read())``, ``runpy.run_path``,
    ``spec_from_file_location`` + ``exec_module``, ``importlib.reload``, ``linecache``,
    ``inspect.getsource``, ``Path.read_bytes``, ``os.open``. Each of them opens the file,
    so the audit hook refuses opening these files, their bytecode and their folders (whose
    file descriptors would open them by a relative name), and compiling or running code
    that names them. So are torch's ``_LAZY_TWINS``, whose twins the armor never saw.
    Every other file stays readable: torch's lazy imports open theirs the same way."""

    files: frozenset[str]  # resolved paths of the sources
    folders: frozenset[str]  # their folders and bytecode folders
    names: frozenset[str]  # their file names (a relative path could be relative to anywhere)
    lazy: tuple[str, ...]  # resolved ``_LAZY_TWINS``: a file, or a folder and all below it
    # torch's modules not loaded yet that hold a namesake of a forbidden API (resolved file ->
    # the API and its hint): importing one is a use of the API (``armor.namesakes_of``)
    closed: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, files: Iterable[str], closed: Mapping[str, tuple[str, str]] | None = None) -> Sources:
        """The sources ``files`` (paths as code objects name them; ``<...>`` ones skipped),
        and the ``closed`` files of namesakes (path -> forbidden API and hint)."""
        spelled = {f for f in files if os.path.isabs(f)}
        real = {_resolved(f) for f in spelled}
        for f in spelled | real:  # what a worker read of them before the armor went on is not kept either
            linecache.cache.pop(f, None)
        folders = {os.path.dirname(f) for f in real}
        lazy = tuple(os.path.join(torch_dir()[1], twin) for twin in _LAZY_TWINS)
        shut = {_resolved(f): use for f, use in (closed or {}).items()}
        return cls(frozenset(real), frozenset(folders | {os.path.join(d, "__pycache__") for d in folders}),
                   frozenset({os.path.basename(f) for f in [*real, *shut]} | {os.path.basename(t) for t in lazy}),
                   lazy, shut)

    def use_of(self, path: str) -> tuple[str, str] | None:
        """The forbidden API (and hint) whose namesake ``path`` (absolute) would load, if any."""
        return self.closed.get(_source_of(os.path.realpath(path))) if os.path.isabs(path) else None

    def refuses(self, path: str) -> bool:
        """Whether opening, compiling or running ``path`` would run one of the files again."""
        if not os.path.isabs(path):
            return path.endswith(_CODE_SUFFIXES) and (os.path.basename(_source_of(path)) in self.names
                                                      or "fx_passes" in path.split(os.sep))
        real = os.path.realpath(path)
        source = _source_of(real)
        return source in self.files or real in self.folders or source in self.closed \
            or any(source == twin or source.startswith(twin + os.sep) for twin in self.lazy)


def _source_of(path: str) -> str:
    """The source a path's bytecode was compiled from (``a/__pycache__/b.cpython-311.pyc``
    -> ``a/b.py``); any other path as it is."""
    folder, name = os.path.split(path)
    if name.endswith(".pyc") and os.path.basename(folder) == "__pycache__":
        return os.path.join(os.path.dirname(folder), name.partition(".")[0] + ".py")
    return path


def audit(keep: list[Any], sources: Sources | None,
          report: Callable[[str, str], None] | None = None) -> None:
    """An audit hook that refuses what would reach or rewrite the armor (it holds
    ``keep`` alive: the dispatcher library, which nothing else refers to), and, given
    ``sources``, what would run an armored torch module's code afresh or load a closed
    one (which ``report``s the forbidden API it holds a namesake of)."""
    held = tuple(keep)
    refused = _REFUSED_EVENTS | ({"ctypes.call_function"} if not torch.cuda.is_available() else set())

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in refused:
            raise PermissionError(f"{event} is not available to a submission "
                                  f"({len(held)} guard(s) stay out of reach)")
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            raise PermissionError("replacing a function's code is not available to a submission")
        if event == "open" and args and isinstance(args[0], (str, bytes)) \
                and os.fsdecode(args[0]).rstrip("/").endswith("/mem") \
                and "/proc/" in os.fsdecode(args[0]):
            raise PermissionError("a process's memory file is not available to a submission")
        if sources is not None:
            _guard_sources(sources, event, args, report)

    sys.addaudithook(hook)


def _guard_sources(sources: Sources, event: str, args: tuple[Any, ...],
                   report: Callable[[str, str], None] | None) -> None:
    """The audit hook's part for ``Sources``: refuse opening an armored file, compiling
    source under its name, running its code, or making links."""
    if event in _LINK_EVENTS:
        raise PermissionError("making links is not available to a submission in this drill")
    path: Any = None
    if event == "open" and args:
        path = args[0]
    elif event == "compile" and len(args) > 1:
        path = args[1]
    elif event == "exec" and args and isinstance(args[0], types.CodeType):
        path = args[0].co_filename
    if isinstance(path, (str, bytes)) and sources.refuses(os.fsdecode(path)):
        use = sources.use_of(os.fsdecode(path))
        if use is not None and report is not None:
            report(*use)  # loading torch's own copy of a forbidden API is a use of it
        raise PermissionError(f"{os.fsdecode(path)} is not available to a submission in this drill: "
                              "it is torch's code for what the drill forbids, and running it again "
                              "would undo that")
