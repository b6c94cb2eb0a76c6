"""Other routes to a drill's answer: callables in torch that reproduce one of its
functions on the examples its own properties draw.

The hunt runs in a process of its own (``python -m grader.authoring.audit.routes
COURSE DRILL OUT``), since it calls thousands of torch callables with arguments
they were never meant for:

1. **Examples.** The reference is graded once, in-process, through a wrapper that
   keeps each call's arguments (copied before the call) and answer; a few calls
   per function with different answers are kept (a function whose answers are all
   alike, or that answers ``None``, is not hunted: any constant would match).
2. **Candidates.** Every callable of torch's public namespaces, ``torch.func``,
   ``torch.nested``, ``torch.autograd.functional``, ``torch.utils.checkpoint``,
   ``torch.amp``, ``_refs``, ``_decomp`` and ``_prims``; the methods of
   ``torch.Tensor``; and the methods, private ones included, of the classes those
   modules define. Names that change global state (``set_*``, seeds, saving) or
   reach devices, processes or the network are left out.
3. **Calls.** Each candidate is called with each example's arguments as given,
   then, as far as the budget allows, through one cheap transform before
   (the first tensor transposed) or after (transposed, negated, subtracted from the
   first input, ``log``, ``exp``, made a list). A candidate that reproduces every
   kept example (values equal; a dtype may differ, a cast is cheap) is a route.

Whether a route still earns points is not decided here: ``grader.authoring.audit.run``
grades it as a submission, in the sandbox.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import itertools
import json
import math
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

NAMESPACES = (
    "torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft", "torch.func",
    "torch.nested", "torch.autograd.functional", "torch.utils.checkpoint", "torch.amp",
    "torch.amp.grad_scaler", "torch.nn.utils.rnn", "torch.utils.data", "torch.masked",
    "torch._refs", "torch._refs.nn.functional", "torch._refs.special", "torch._refs.linalg", "torch._refs.fft",
    "torch._decomp.decompositions", "torch._prims", "torch._prims_common",
    "torch.distributed.fsdp.sharded_grad_scaler", "torch.nn.utils", "torch.nn.utils.fusion",
    "torch.nn.utils.parametrize", "torch.nn.utils.clip_grad", "torch.nn.init", "torch.ao.nn.intrinsic",
    "torch.ao.quantization.fuse_modules",
)
# names never called: they change the process (global state, files, threads) or wait on the world
_SKIP_PARTS = ("set_", "seed", "save", "load", "compile", "export", "jit", "cuda", "mps", "xpu", "distributed",
               "hub", "profil", "backends", "onnx", "package", "multiprocessing", "thread", "_dynamo", "_inductor",
               "deterministic", "default", "record", "sleep", "wait", "register", "hook", "print", "warn",
               "script", "fork", "spawn", "lib", "storage", "share", "pin_memory", "file", "open", "write",
               "enable", "disable", "flag", "global", "module_load", "vmap_impl")
_SKIP_EXACT = frozenset({"manual_seed", "empty_cache", "no_grad", "inference_mode", "autocast", "grad", "jit_trace",
                         "symbolic_trace", "settrace", "set_mode", "TorchFunctionMode", "TorchDispatchMode",
                         "__init__", "__new__", "__del__", "__setattr__", "__delattr__", "__init_subclass__"})
CALL_TIMEOUT_S = 0.5
EXAMPLES_PER_FUNCTION = 4


@dataclass(frozen=True)
class Route:
    """A callable that reproduced a drill function on every kept example."""

    drill: str
    function: str      # the drill's function
    path: str          # a dotted path that resolves to the callable in a fresh interpreter
    before: str        # a transform of the first tensor argument, or ""
    after: str         # a transform of the answer, or ""

    @property
    def id(self) -> str:
        return f"{self.function}={self.path}" + (f"[before:{self.before}]" if self.before else "") + (
            f"[after:{self.after}]" if self.after else "")


# ------------------------------------------------------------------ examples

Examples = dict[tuple[str, str], list[tuple[tuple, dict, Any]]]  # (drill, function) -> calls
RECORDED: Examples = {}


def recording_source(drill: str, stub_functions: list[str], reference_path: Path) -> str:
    """A drill file that answers with the reference and keeps every call here."""
    lines = ["from grader.authoring.audit import do_nothing as _n, routes as _routes",
             f"_reference = _n.load_reference({str(reference_path)!r})", ""]
    for f in stub_functions:
        lines += [f"def {f}(*args, **kwargs):",
                  f"    return _routes.record(({drill!r}, {f!r}), _reference.{f}, args, kwargs)", ""]
    return "\n".join(lines)


def record(name: tuple[str, str], function: Callable, args: tuple, kwargs: dict) -> Any:
    try:
        before = copy.deepcopy((args, kwargs))
    except Exception:  # noqa: BLE001 - arguments that cannot be copied (a collective) are not kept
        before = None
    answer = function(*args, **kwargs)
    if before is not None and len(RECORDED.setdefault(name, [])) < 400:
        try:
            RECORDED[name].append((*before, copy.deepcopy(answer)))
        except Exception:  # noqa: BLE001
            pass
    return answer


def kept_examples(calls: list[tuple[tuple, dict, Any]]) -> list[tuple[tuple, dict, Any]]:
    """Up to ``EXAMPLES_PER_FUNCTION`` ordinary calls with different answers; [] when
    the answers are all alike or None. Ordinary: the smallest quarter (empty inputs,
    single elements: corners a route may get wrong and still earn most points) is
    passed over, and the rest sampled evenly by size."""
    by_answer: dict[str, tuple[tuple, dict, Any]] = {}
    for call in sorted(calls, key=lambda c: _size(c[:2])):
        if call[2] is not None:
            by_answer.setdefault(_fingerprint(call[2]), call)
    distinct = list(by_answer.values())
    ordinary = distinct[len(distinct) // 4:]
    if len(ordinary) < 2:
        return []
    step = max(1, len(ordinary) // EXAMPLES_PER_FUNCTION)
    return ordinary[::step][:EXAMPLES_PER_FUNCTION]


def _size(value: Any) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, list | tuple):
        return sum(_size(v) for v in value) + 1
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values()) + 1
    return 1


def _fingerprint(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"T{tuple(value.shape)}{value.detach().double().flatten().tolist()[:64]}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_fingerprint(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_fingerprint(v)}" for k, v in value.items()) + "}"
    return repr(value)[:200]


# ------------------------------------------------------------------ candidates

def _skipped(name: str) -> bool:
    return name in _SKIP_EXACT or any(part in name for part in _SKIP_PARTS)


def candidates() -> Iterator[tuple[str, Callable]]:
    """(dotted path, callable) for every callable the hunt tries, each object once."""
    import torch

    seen: set[int] = set()
    classes: list[tuple[str, type]] = []
    for namespace in NAMESPACES:
        try:
            module = importlib.import_module(namespace)
        except Exception:  # noqa: BLE001 - a namespace this build lacks
            continue
        for name in sorted(dir(module)):
            if _skipped(name) or name.startswith("__"):
                continue
            try:
                obj = getattr(module, name)
            except Exception:  # noqa: BLE001
                continue
            if inspect.isclass(obj):
                if (getattr(obj, "__module__", "") or "").startswith("torch") and not issubclass(obj, BaseException):
                    classes.append((f"{namespace}.{name}", obj))
                continue
            if callable(obj) and not inspect.ismodule(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{namespace}.{name}", obj
    for name in sorted(dir(torch.Tensor)):
        if not _skipped(name) and not name.startswith("__"):
            obj = getattr(torch.Tensor, name, None)
            if callable(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"torch.Tensor.{name}", obj
    for path, cls in classes:
        for name, obj in sorted(vars(cls).items()):
            if _skipped(name) or (name.startswith("__") and name.endswith("__")):
                continue
            function = obj.__func__ if isinstance(obj, classmethod | staticmethod) else obj
            if (inspect.isfunction(function) or inspect.ismethoddescriptor(function)) and id(function) not in seen:
                seen.add(id(function))
                yield f"{path}.{name}", function


# ------------------------------------------------------------------ transforms and comparison

def _first_tensor_index(args: tuple) -> int | None:
    import torch

    return next((i for i, a in enumerate(args) if isinstance(a, torch.Tensor)), None)


def _before(name: str, args: tuple) -> tuple | None:
    i = _first_tensor_index(args)
    if not name:
        return args
    if i is None or args[i].dim() < 2:
        return None
    return (*args[:i], args[i].transpose(0, 1), *args[i + 1:])


AFTER = ("", "transpose", "neg", "input-minus", "log", "exp", "list")


def _after(name: str, answer: Any, args: tuple) -> Any:
    import torch

    if not name:
        return answer
    if name == "list":
        if isinstance(answer, torch.Tensor | dict | str) or not hasattr(answer, "__iter__"):
            return None
        return list(itertools.islice(answer, 100_000))
    if not isinstance(answer, torch.Tensor) or not answer.is_floating_point():
        return None
    if name == "transpose":
        return answer.transpose(-1, -2) if answer.dim() >= 2 else None
    if name == "neg":
        return -answer
    if name == "input-minus":
        i = _first_tensor_index(args)
        return args[i] - answer if i is not None and args[i].shape == answer.shape else None
    return answer.log() if name == "log" else answer.exp()


def same(got: Any, want: Any) -> bool:
    """Equal values: tensors of one shape whose values agree (the dtype may differ),
    the same numbers, and containers of such things."""
    import torch

    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.is_complex() != want.is_complex():
            return False
        if got.layout != torch.strided or got.is_nested:
            return False
        try:
            return bool(torch.allclose(got.detach().to(torch.float64), want.detach().to(torch.float64),
                                       rtol=1e-5, atol=1e-6, equal_nan=True))
        except Exception:  # noqa: BLE001
            return False
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, int | float):
        return isinstance(got, int | float) and (got == want or (isinstance(want, float) and math.isclose(got, want)))
    if isinstance(want, list | tuple):
        return (isinstance(got, list | tuple) and len(got) == len(want)
                and all(same(g, w) for g, w in zip(got, want)))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(want, torch.nn.Module):  # a module: its class and every parameter and buffer
        return (type(got) is type(want) and isinstance(got, torch.nn.Module)
                and same(dict(got.state_dict()), dict(want.state_dict())))
    return False


class _Timeout(Exception):
    pass


_armed = False  # whether an alarm now may interrupt: only inside ``_guarded``'s work


def _alarm(_signum: int, _frame: Any) -> None:
    if _armed:
        raise _Timeout


def _guarded(work: Callable[[], Any]) -> tuple[bool, Any]:
    """``work()`` under a short alarm, global state restored after; (ok, value)."""
    import torch

    global _armed
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    signal.setitimer(signal.ITIMER_REAL, CALL_TIMEOUT_S)
    _armed = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, work()
    except BaseException:  # noqa: BLE001 - anything a wrong call does is "not a route"
        return False, None
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


def _call(function: Callable, args: tuple, kwargs: dict) -> tuple[bool, Any]:
    """Call on copies of the arguments; (ok, answer)."""
    return _guarded(lambda: function(*_fresh(args), **_fresh(kwargs)))


def _fresh(value: Any) -> Any:
    """A copy a candidate may change: tensors cloned, containers rebuilt, modules and
    optimizers deep-copied, anything else (numbers, strings, functions) shared."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad) if value.is_leaf else value.clone()
    if type(value) in (list, tuple):
        return type(value)(_fresh(v) for v in value)
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, int | float | str | bool | type(None)) or (callable(value) and not isinstance(
            value, torch.nn.Module)):
        return value
    return copy.deepcopy(value)


def _agrees(after: str, answer: Any, args: tuple, want: Any) -> bool:
    ok, equal = _guarded(lambda: same(_after(after, answer, args), want))
    return ok and bool(equal)


def hunt(examples: Examples, budget_s: float, log: Path) -> dict[str, Any]:
    """The routes among ``candidates()`` for each (drill, function)'s examples, with
    how many callables were tried, which crashed the process, and whether the whole
    hunt fit in ``budget_s`` seconds of CPU time.

    The calls run in a forked child that writes each candidate's index before trying
    it and each route as it finds it; a candidate that kills the child (some torch
    kernels crash on arguments they were never meant for) is noted, and a new child
    goes on after it."""
    left = budget_s  # CPU seconds: the same hunt on a busy machine as on a quiet one
    paths = [path for path, _ in candidates()]
    crashed: list[str] = []
    lines: list[str] = []
    start, complete = 0, True
    while start < len(paths):
        log.write_text("")
        pid = os.fork()
        if pid == 0:  # the child: hunt from ``start``, and leave without cleaning up
            _bound_memory()
            os._exit(_hunt_from(examples, start, left, log))
        _, status, usage = os.wait4(pid, 0)
        left -= usage.ru_utime + usage.ru_stime
        written = log.read_text().splitlines()
        lines += [line for line in written if line.startswith("{")]
        reached = [int(line[1:]) for line in written if line.startswith("@")]
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (0, _OUT_OF_TIME):
            complete = os.WEXITSTATUS(status) == 0
            start = reached[-1] + 1 if reached else start
            break
        last = reached[-1] if reached else start
        crashed.append(paths[last])
        start = last + 1
    return {"routes": [Route(**json.loads(line)) for line in lines], "tried": min(start, len(paths)),
            "crashed": crashed, "complete": complete}


_OUT_OF_TIME = 3
# What a hunting child may allocate beyond what it inherited: a candidate called with
# arguments it was never meant for can ask for tens of GiB (``torch.empty`` of an
# example's values as a shape); refused, its call fails as any other wrong call does.
HUNT_MEMORY_BYTES = 2 * 2**30


def _bound_memory() -> None:
    """Cap this process's data (heap and anonymous mappings) at what it holds now plus
    ``HUNT_MEMORY_BYTES``."""
    import resource

    held = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                held = int(line.split()[1]) * 1024
    limit = held + HUNT_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _hunt_from(examples: Examples, start: int, budget_s: float, log: Path) -> int:
    signal.signal(signal.SIGALRM, _alarm)
    with log.open("a") as out:
        for i, (path, function) in enumerate(candidates()):
            if i < start:
                continue
            if time.process_time() > budget_s:
                return _OUT_OF_TIME
            out.write(f"@{i}\n")
            out.flush()
            binds = _binder(function)
            for (drill, name), kept in examples.items():
                if not binds(kept[0][0], kept[0][1]):
                    continue
                for before in ("", "transpose"):
                    after = _matches(function, kept, before)
                    if after is not None:
                        out.write(json.dumps(asdict(Route(drill, name, path, before, after))) + "\n")
                        out.flush()
                        break
    return 0


def _binder(function: Callable) -> Callable[[tuple, dict], bool]:
    """Whether a call with these arguments would even bind to ``function``'s
    signature (always, where it has none to read): most candidates take other
    arguments, and binding costs far less than copying the arguments and calling."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return lambda args, kwargs: True

    def binds(args: tuple, kwargs: dict) -> bool:
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            return False
        return True
    return binds


def _matches(function: Callable, kept: list[tuple[tuple, dict, Any]], before: str) -> str | None:
    """The after-transform with which ``function`` reproduces every example, or None."""
    first_args = _before(before, kept[0][0])
    if first_args is None:
        return None
    ok, answer = _call(function, first_args, kept[0][1])
    if not ok or answer is None:
        return None
    for after in AFTER:
        if not _agrees(after, answer, first_args, kept[0][2]):
            continue
        if all(_reproduces(function, example, before, after) for example in kept[1:]):
            return after
    return None


def _reproduces(function: Callable, example: tuple[tuple, dict, Any], before: str, after: str) -> bool:
    args = _before(before, example[0])
    if args is None:
        return False
    ok, answer = _call(function, args, example[1])
    return ok and _agrees(after, answer, args, example[2])


# ------------------------------------------------------------------ the process

def main(argv: list[str]) -> int:
    """``COURSE OUT BUDGET_S DRILL...``: record the reference's examples of each DRILL
    (one grading), hunt, and write what was found per drill as JSON to OUT."""
    import tempfile

    from grader.authoring.audit.do_nothing import public_functions
    from grader.authoring.audit.grading import warm_imports
    from grader.grading.pipeline import run
    from grader.grading.request import GradingRequest

    course, out, budget, drills = Path(argv[0]), Path(argv[1]), float(argv[2]), argv[3:]
    warm_imports()
    functions = {d: public_functions((course / "exercises" / f"{d}.py").read_text(encoding="utf-8")) for d in drills}
    with tempfile.TemporaryDirectory(prefix="torchdrill-routes-") as tmp:
        for drill in drills:
            target = Path(tmp) / f"{drill}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(recording_source(drill, functions[drill], course / "reference" / f"{drill}.py"))
        run(GradingRequest(course=course, folder=Path(tmp), only=tuple(drills), profile="torchdrill-quick",
                           shrink=False))
    recorded = importlib.import_module(__spec__.name).RECORDED  # this file runs as __main__; the wrapper imports it
    examples = {key: kept for key, calls in recorded.items() if (kept := kept_examples(calls))}
    start = time.monotonic()
    found = hunt(examples, budget, out.with_suffix(".log"))
    seconds = round(time.monotonic() - start, 2)
    out.write_text(json.dumps({drill: {
        "hunted": [f for f in functions[drill] if (drill, f) in examples],
        "not_hunted": [f for f in functions[drill] if (drill, f) not in examples],
        "tried": found["tried"], "complete": found["complete"], "crashed": found["crashed"], "seconds": seconds,
        "routes": [asdict(r) for r in found["routes"] if r.drill == drill]} for drill in drills}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
