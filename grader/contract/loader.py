"""Load one exercise file of a submission as a module, by path.

Each submission gets its own module namespace (``torchdrill_submission_<n>``), so
a student's ``one_hot.py`` never collides with the reference's or another
student's, and nothing is added to ``sys.path``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import itertools
import linecache
import sys
import traceback
from pathlib import Path
from types import ModuleType

from grader.core.i18n import Message
from grader.core.outcomes import NotAttempted, SubmissionError

_counter = itertools.count()


def exercise_path(root: Path, exercise_id: str) -> Path:
    """``root/tensors/one_hot.py`` for exercise ``tensors/one_hot``."""
    return root / f"{exercise_id}.py"


class _ReadAlready(importlib.machinery.SourceFileLoader):
    """A file's loader whose bytes were read already (at intake): nothing is read again,
    and tracebacks and ``inspect`` still find the source by the file's path."""

    def __init__(self, name: str, path: str, data: bytes):
        super().__init__(name, path)
        self._data = data

    def get_data(self, path: str) -> bytes:
        if path == self.path:
            return self._data
        raise OSError(f"{path}: only the submission's own file is loaded here")  # no bytecode cache either

    def path_stats(self, path: str) -> dict[str, float]:
        raise OSError("no bytecode cache for a submission")


def load_exercise(root: Path, exercise_id: str, namespace: str | None = None,
                  source: bytes | None = None) -> ModuleType:
    """Import ``root/<exercise_id>.py`` freshly, under a private module name.

    ``namespace`` names the package it is loaded into (it shows in reprs, so the
    reference gets a fixed one); by default every load gets a new one. ``source``:
    the file's bytes as the intake read them (the file is then not read again).

    Raises ``NotAttempted`` if the file does not exist and ``SubmissionError``
    (naming file, line and cause) if importing it fails in any way.
    """
    path = exercise_path(root, exercise_id)
    if source is None and not path.is_file():
        raise NotAttempted(Message("{path} does not exist", {"path": str(path)}))
    namespace = namespace or f"torchdrill_submission_{next(_counter)}"
    name = f"{namespace}.{exercise_id.replace('/', '.')}"
    loader = None if source is None else _ReadAlready(name, str(path), source)
    if source is not None:  # tracebacks show the lines graded, without reading the file again
        text = source.decode("utf-8-sig", errors="replace")
        linecache.cache[str(path)] = (len(source), None, text.splitlines(keepends=True), str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise SubmissionError(Message("{path}, line {line}: SyntaxError: {error}",
                                      {"path": str(path), "line": exc.lineno, "error": exc.msg})) from None
    except BaseException as exc:  # noqa: BLE001 - any failure at import is the submission's
        del sys.modules[name]
        raise SubmissionError(Message("{path}: importing it raised {kind}: {error}",
                                      {"path": str(path), "kind": type(exc).__name__, "error": str(exc)}),
                              more=student_traceback(exc, path)) from None
    return module


def student_traceback(exc: BaseException, path: Path | str) -> str:
    """The traceback of ``exc`` trimmed to the frames in the student's own file."""
    path = str(path)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    if not frames:
        return ""
    lines = traceback.format_list(frames)
    return "Traceback (student code only):\n" + "".join(lines).rstrip()
