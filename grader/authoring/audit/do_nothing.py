"""Do-nothing answers built from a drill's signatures: each must score 0.

For every public function of the stub, an answer of one kind:

- ``zeros`` / ``ones``: a constant of the reference's own type and shape (tensors
  of its dtype filled with 0 or 1, ``False``/``True``, ``0``/``1``, the same
  containers and keys), computed on copies of the arguments, so the arguments are
  left as they came (a function that should change them in place does nothing);
- ``raises``: the exception the spec names (the first one the reference raises,
  ``ValueError`` when it raises none), on every call;
- ``echo``: the first argument handed back (the first tensor among them if any);
- ``nothing``: ``None``, and no change to anything.

A seed picks further mixes, one kind per function. The answers know the
reference's shapes, which no lazy student does: stronger do-nothing answers than
any a person would write, so a drill that gives them 0 gives the weaker ones 0 too.
They run in the grading process (``--isolation none``) and import the reference
by path through :func:`load_reference`.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

KINDS = ("zeros", "ones", "raises", "echo", "nothing")


@dataclass(frozen=True)
class Answer:
    """One do-nothing answer: a kind per function, and the whole drill file."""

    id: str                  # "zeros", "mix-3"
    kinds: dict[str, str]    # function -> kind
    source: str


def public_functions(stub_source: str) -> list[str]:
    """The stub's public functions, in order."""
    return [n.name for n in ast.parse(stub_source).body
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]


def spec_error(reference_source: str) -> str:
    """The first exception class the reference raises by name (``ValueError`` if none)."""
    for node in ast.walk(ast.parse(reference_source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id.endswith("Error") and exc.id in dir(__builtins__):
                return exc.id
    return "ValueError"


def answers(stub_source: str, reference_source: str, reference_path: Path, seed: int, mixes: int = 2) -> list[Answer]:
    """Every single-kind answer, then ``mixes`` seed-picked mixes (for a drill of
    several functions), each as a whole drill file."""
    functions = public_functions(stub_source)
    error = spec_error(reference_source)
    chosen = [(kind, dict.fromkeys(functions, kind)) for kind in KINDS]
    if len(functions) > 1:
        rng = random.Random(seed)
        for i in range(mixes):
            chosen.append((f"mix-{i}", {f: rng.choice(KINDS) for f in functions}))
    return [Answer(name, kinds, _source(kinds, reference_path, error)) for name, kinds in chosen]


def _source(kinds: dict[str, str], reference_path: Path, error: str) -> str:
    lines = [f'"""A do-nothing answer built by torchdrill audit: {", ".join(f"{f} {k}" for f, k in kinds.items())}."""',
             "from grader.authoring.audit import do_nothing as _answer",
             f"_reference = _answer.load_reference({str(reference_path)!r})", ""]
    for function, kind in kinds.items():
        lines += [f"def {function}(*args, **kwargs):",
                  f"    return _answer.answer({kind!r}, _reference.{function}, args, kwargs, {error})", ""]
    return "\n".join(lines)


_loaded: dict[str, ModuleType] = {}


def load_reference(path: str) -> ModuleType:
    """The reference module at ``path``, loaded once per process under a private name."""
    if path not in _loaded:
        name = f"torchdrill_audit_reference_{len(_loaded)}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _loaded[path] = module
    return _loaded[path]


def _copies(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Copies of the arguments for the reference to work on (the originals are left
    alone); what cannot be copied (a collective, a lock) is shared."""
    try:
        return copy.deepcopy((args, kwargs))
    except Exception:  # noqa: BLE001 - fall back to sharing what cannot be copied
        return tuple(_copy_one(a) for a in args), {k: _copy_one(v) for k, v in kwargs.items()}


def _copy_one(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001
        return value


def _constant(value: Any, fill: int) -> Any:
    import torch
    from torch import nn

    if isinstance(value, torch.Tensor):
        return torch.full_like(value.detach(), fill) if value.dtype != torch.bool else torch.full_like(value, bool(fill))
    if isinstance(value, bool):
        return bool(fill)
    if isinstance(value, int | float):
        return type(value)(fill)
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {k: _constant(v, fill) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_constant(v, fill) for v in value]
        return type(value)(items) if type(value) in (list, tuple) else value.__class__(*items)
    if isinstance(value, nn.Module):
        with torch.no_grad():
            for p in value.parameters():
                p.fill_(fill)
        return value
    return value


def answer(kind: str, function: Any, args: tuple, kwargs: dict, error: type[Exception]) -> Any:
    """What a do-nothing ``function`` of ``kind`` returns for this call."""
    import torch

    if kind in ("zeros", "ones"):
        a, k = _copies(args, kwargs)
        return _constant(function(*a, **k), int(kind == "ones"))
    if kind == "raises":
        raise error(f"{function.__name__}: a do-nothing answer always raises")
    if kind == "echo":
        values = [*args, *kwargs.values()]
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        return tensors[0] if tensors else values[0] if values else None
    return None
