"""Words and text for reports, shared by the HTML report, the terminal and the exports.

Everything here reads the plain data of ``results.json`` (see ``grader.core.results``
and ``grader.contract.describe``) and returns plain strings: no HTML, no rich markup. The
HTML report escapes what it gets from here; the terminal prints it as plain text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from grader.core.outcomes import CUDA_REASON, ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT
from grader.core.results import Results

# Outcomes (of a property) and statuses (of an exercise) in a learner's words.
LABELS = {
    PASSED: "passed",
    FAILED: "failed",
    ERROR: "error",
    TIMED_OUT: "timed out",
    NOT_ATTEMPTED: "not attempted",
    NOT_RUN: "not run here",
    "partial": "partly passed",
}

# Outcomes that come with an explanation worth reading (message, counterexample).
PROBLEMS = (FAILED, ERROR, TIMED_OUT)

# Problems first, then what is still to do, then what went well.
_ORDER = {FAILED: 0, ERROR: 0, TIMED_OUT: 0, NOT_ATTEMPTED: 1, NOT_RUN: 2, PASSED: 3}

TRACEBACK_MARK = "Traceback (student code only):"

_Test = TypeVar("_Test", bound=Mapping[str, Any])  # a test's record: ``TestResult`` or a plain dict


def label(outcome_or_status: str) -> str:
    """``not_attempted`` -> ``not attempted``."""
    return LABELS.get(outcome_or_status, outcome_or_status.replace("_", " "))


def number(x: float | int | None, digits: int = 2) -> str:
    """A score for people: at most ``digits`` decimals, no trailing zeros."""
    if x is None:
        return "–"
    text = f"{round(float(x), digits):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def plural(count: int | float, word: str, many: str | None = None) -> str:
    """``1 test``, ``2 tests``, ``1 property``, ``3 properties``: a count and its noun."""
    if count == 1:
        return f"{number(count)} {word}"
    if many is None:
        many = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else \
            word + "es" if word.endswith(("s", "x", "ch", "sh")) else word + "s"
    return f"{number(count)} {many}"


def score_text(score: float, max_score: float) -> str:
    """``0.77 / 10``; never rounds a score that is short of the maximum up to it."""
    digits = 2
    while digits < 6 and score < max_score and number(score, digits) == number(max_score, digits):
        digits += 1
    return f"{number(score, digits)} / {number(max_score, digits)}"


def percent(score: float, max_score: float) -> float:
    return 0.0 if not max_score else max(0.0, min(100.0, 100.0 * score / max_score))


def property_title(test_name: str) -> str:
    """``test_dtype_is_int64[3]`` -> ``dtype is int64 [3]`` (the readable part of a name)."""
    base, bracket, params = test_name.partition("[")
    words = base.removeprefix("test_").replace("_", " ").strip() or base
    return f"{words} [{params}" if bracket else words


def sorted_tests(tests: Iterable[_Test]) -> list[_Test]:
    """Problems first, heaviest first, then not attempted, not run, passed; by name
    within each (and among problems of the same weight)."""
    return sorted(tests, key=lambda t: (_ORDER.get(t["outcome"], 0),
                                        -_weight(t) if t["outcome"] in PROBLEMS else 0.0, t["name"]))


def _weight(test: Mapping[str, Any]) -> float:
    try:
        return float(test.get("weight", 1))
    except (TypeError, ValueError):
        return 1.0


def problems(exercise: Mapping[str, Any]) -> list[Any]:
    """The properties the exercise lost (failed, error, timed out), heaviest first; in
    the order of the results (the test file's) among equal weights."""
    return sorted((t for t in exercise["tests"] if t["outcome"] in PROBLEMS), key=lambda t: -_weight(t))


def main_problem(exercise: Mapping[str, Any]) -> Any:
    """The heaviest lost property: the one a summary line names (None when none)."""
    lost = problems(exercise)
    return lost[0] if lost else None


def reason(test: Mapping[str, Any]) -> str:
    """Why a property was lost, in one line: its message's first line (the student's
    traceback left out), or its outcome when there is no message."""
    message, _ = split_traceback(test.get("message") or "")
    return first_line(message) or label(test["outcome"])


def reasons(exercise: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each distinct reason the exercise lost properties for, the heaviest first:
    ``{"reason", "tests" (the records, heaviest first), "weight" (their total)}``."""
    groups: dict[str, list[Any]] = {}
    for t in problems(exercise):
        groups.setdefault(reason(t), []).append(t)
    return [{"reason": r, "tests": ts, "weight": sum(_weight(t) for t in ts)} for r, ts in groups.items()]


def property_points(exercise: Mapping[str, Any], test: Mapping[str, Any]) -> float | None:
    """The points this property is worth in its exercise (None when not run here)."""
    if test["outcome"] == NOT_RUN:
        return None
    run = sum(t["weight"] for t in exercise["tests"] if t["outcome"] != NOT_RUN)
    return exercise["points"] * test["weight"] / run if run else 0.0


def split_traceback(message: str) -> tuple[str, str]:
    """(message, traceback) where the grader appended the student's trimmed traceback."""
    head, mark, tail = message.partition(TRACEBACK_MARK)
    return (head.rstrip(), (mark + tail).rstrip()) if mark else (message.rstrip(), "")


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# What gradings before issue 26 wrote for a cuda test: advice that graded the reference.
_OLD_CUDA_REASON = "needs a CUDA device; this runner has none (run tox -e cuda on a CUDA machine)"


def not_run_reason(test: Mapping[str, Any]) -> str:
    """Why a test was not run here, in today's words (older results.json told a student
    to run ``tox -e cuda``, which grades the reference, not their work)."""
    message = (test.get("message") or "").strip() or "no reason given"
    return CUDA_REASON if message == _OLD_CUDA_REASON else message


def not_run_here(results: Results) -> list[dict[str, Any]]:
    """Tests not run on this machine, grouped by reason: [{reason, tests: [ids]}]."""
    groups: dict[str, list[str]] = {}
    for ex in results["exercises"]:
        for t in ex["tests"]:
            if t["outcome"] == NOT_RUN:
                groups.setdefault(not_run_reason(t), []).append(f"{ex['id']}::{t['name']}")
    return [{"reason": r, "tests": ids} for r, ids in groups.items()]


def status_counts(results: Results) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ex in results["exercises"]:
        counts[ex["status"]] = counts.get(ex["status"], 0) + 1
    return counts


def captured_output(test: Mapping[str, Any]) -> list[tuple[str, str]]:
    """[(stream, text)] of what the student's code printed, where the results keep it."""
    out = []
    for stream in ("stdout", "stderr"):
        text = test.get(stream) or (test.get("counterexample") or {}).get(stream)
        if text:
            out.append((stream, text))
    return out


# ------------------------------------------------------------------ the environment

_ENVIRONMENT_LABELS = {"cuda_available": "CUDA", "workers": "workers", "shrink": "shrinking",
                       "examples": "examples", "budgets": "time budgets", "grading": "graded on",
                       "isolation": "isolation"}


def environment_items(environment: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """What ``results.json``'s ``environment`` says, as (label, sentence) pairs for people:
    never a Python dict or list (``budgets``, ``grading``, ``examples`` are summed up)."""
    items = []
    for key, value in (environment or {}).items():
        if value is None or value == {} or value == []:
            continue
        text = _ENVIRONMENT_TEXT.get(key, _plain)(value)
        if text:
            items.append((_ENVIRONMENT_LABELS.get(key, key.replace("_", " ")), text))
    return items


def _plain(value: Any) -> str:
    """Any JSON value as words: ``yes``/``no``, numbers, ``key value, ...``; never a repr."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{str(k).replace('_', ' ')} {_plain(v)}" for k, v in value.items()
                         if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return str(value)


def _cuda_text(value: Any) -> str:
    return ("available" if value else "not available") if isinstance(value, bool) else _plain(value)


def _workers_text(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return "one process" if value <= 1 else f"{value} in parallel"
    return _plain(value)


def _shrink_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on (smallest failing inputs)" if value else "off (failing inputs as first found)"
    return _plain(value)


def _isolation_text(value: Any) -> str:
    if not isinstance(value, Mapping):
        return _plain(value)
    layers = value.get("layers") or {}
    text = str(value.get("mode") or "?")
    if isinstance(layers, Mapping) and layers:
        text += ": " + ", ".join(f"{layer} {state}" for layer, state in layers.items())
    return text


def _examples_text(value: Any) -> str:
    if not isinstance(value, Mapping):
        return "public (the ones in your tests)" if value == "public" else _plain(value)
    if value.get("drawn") == "public":
        return "public (the ones in your tests)"
    if value.get("drawn") == "secret":
        widened = value.get("widened")
        return ("official: drawn from the course secret"
                + (f" {value['secret']}" if value.get("secret") else "")
                + (f", ranges {number(widened)}× wider" if isinstance(widened, (int, float))
                   and widened != 1 else ""))
    return _plain(value)


def _budgets_text(value: Any) -> str:
    if not isinstance(value, Mapping):
        return _plain(value)
    drills = value.get("drills") or {}
    source = value.get("source") or {}
    if not isinstance(drills, Mapping) or not drills:
        return _plain(value)
    seconds = [float(s) for s in drills.values() if isinstance(s, (int, float))]
    measured = sum(1 for s in source.values() if s == "reference") if isinstance(source, Mapping) else 0
    text = f"{plural(len(drills), 'drill')}, {number(sum(seconds), 0)} s in all"
    if isinstance(value.get("factor"), (int, float)) and isinstance(value.get("margin_s"), (int, float)):
        text += (f" ({number(value['factor'])}× the reference's time + {number(value['margin_s'])} s"
                 + (f"; {plural(len(drills) - measured, 'drill')} without a reference time"
                    if measured < len(drills) else "") + ")")
    return text


def _grading_text(value: Any) -> str:
    if not isinstance(value, Mapping):
        return _plain(value)
    text = str(value.get("worker") or "?")
    if value.get("cuda_worker"):
        text += f"; cuda tests on {value['cuda_worker']}"
    return text


_ENVIRONMENT_TEXT = {"cuda_available": _cuda_text, "workers": _workers_text, "shrink": _shrink_text,
                     "isolation": _isolation_text, "examples": _examples_text,
                     "budgets": _budgets_text, "grading": _grading_text}


# ------------------------------------------------------------------ values

def is_tensor(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "tensor"


def scalar(x: Any) -> str:
    """A tensor element as torch prints it: ``1.`` for a whole float, ``True`` for a bool."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return repr(x)
        if x.is_integer() and abs(x) < 1e16:
            return f"{x:.0f}."
        return f"{x:.6g}"
    return str(x)


def tensor_summary(t: dict[str, Any]) -> str:
    """``<int64 tensor of shape (2, 3)>``: how a tensor argument is named in a call."""
    return f"<{t.get('dtype', '?')} tensor of shape {tuple(t.get('shape') or ())}>"


def value_cells(values: Any, shape: list[int] | None, marked: set[tuple[int, ...]] | None = None
                ) -> Iterator[tuple[str, bool]]:
    """A tensor's ``values`` (nested lists, ``"..."`` where elided) as text pieces,
    laid out like ``torch`` prints them; each piece says whether it is an element to
    highlight (its index is in ``marked``)."""
    if not isinstance(values, list):
        yield scalar(values), bool(marked and () in marked)
        return
    width = max((len(scalar(v)) for v in _leaves(values)), default=1)
    yield from _cells(values, (), 0, width, marked or set())


def _leaves(values: Any) -> Iterator[Any]:
    if isinstance(values, list):
        for v in values:
            yield from _leaves(v)
    elif values != "...":
        yield values


def _cells(values: list[Any], index: tuple[int, ...], depth: int, width: int,
           marked: set[tuple[int, ...]]) -> Iterator[tuple[str, bool]]:
    yield "[", False
    nested = any(isinstance(v, list) for v in values)
    gap = ",\n" + "\n" * (_depth(values) - 2 if nested else 0) + " " * (depth + 1)
    position: int | None = 0
    for k, v in enumerate(values):
        if k:
            yield (gap if nested else ", "), False
        if v == "...":
            yield "...", False
            position = None  # indices after an elision are unknown: mark nothing more
            continue
        here = (*index, position) if position is not None else None
        if isinstance(v, list):
            yield from _cells(v, here or (-1,), depth + 1, width,
                              marked if here is not None else set())
        else:
            text = scalar(v)
            if len(text) < width:
                yield " " * (width - len(text)), False  # padding stays outside a highlight
            yield text, here is not None and here in marked
        if position is not None:
            position += 1
    yield "]", False


def _depth(values: Any) -> int:
    if not isinstance(values, list):
        return 0
    return 1 + max((_depth(v) for v in values), default=0)


def values_text(t: dict[str, Any]) -> str:
    """A described tensor's values as plain text."""
    if isinstance(t.get("values"), str) and t["values"] != "...":
        return t["values"]  # complex or sparse: described by repr
    return "".join(text for text, _ in value_cells(t.get("values"), t.get("shape")))


def marked_indices(test: Mapping[str, Any]) -> set[tuple[int, ...]]:
    """The first differing indices of a values diff, to highlight in got and expected."""
    diff = (test.get("counterexample") or {}).get("diff") or {}
    return {tuple(i) for i in diff.get("first_indices") or []}


def value_text(value: Any) -> str:
    """Any described value (``grader.contract.describe``) as one line of Python-like text."""
    if is_tensor(value):
        return tensor_summary(value)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind in ("list", "tuple"):
            items = [value_text(v) for v in value.get("items", [])]
            if value.get("omitted"):
                items.append(f"... {value['omitted']} more")
            inner = ", ".join(items) + ("," if kind == "tuple" and len(items) == 1 else "")
            return f"({inner})" if kind == "tuple" else f"[{inner}]"
        if kind == "dict":
            return "{" + ", ".join(f"{k!r}: {value_text(v)}"
                                   for k, v in value.get("items", {}).items()) + "}"
        if kind == "module":
            return value.get("repr", "module")
        return value.get("repr", str(value))
    return repr(value)


SMALL_VALUES = 8  # a tensor with at most this many elements is written out in full in one line


def answer_text(value: Any) -> str:
    """A described value as one line for people, small tensors with their values:
    ``<float32 tensor of shape (2,)> [0., 1.]``; never JSON."""
    if is_tensor(value):
        size = 1
        for d in value.get("shape") or []:
            size *= d
        values = value.get("values")
        if size <= SMALL_VALUES and not value.get("elided") and values is not None:
            return f"{tensor_summary(value)} {' '.join(values_text(value).split())}"
        return tensor_summary(value)
    return value_text(value)


def call_text(call: dict[str, Any]) -> str:
    """``one_hot(tensor int64 [2], 2)``."""
    args = [value_text(a) for a in call.get("args", [])]
    args += [f"{k}={value_text(v)}" for k, v in call.get("kwargs", {}).items()]
    return f"{call.get('function', '?')}({', '.join(args)})"


def tensors_in(value: Any, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, tensor) for every tensor inside a described value, e.g. ``result[0]``."""
    if is_tensor(value):
        yield name, value
    elif isinstance(value, dict) and value.get("type") in ("list", "tuple"):
        for i, v in enumerate(value.get("items", [])):
            yield from tensors_in(v, f"{name}[{i}]")
    elif isinstance(value, dict) and value.get("type") == "dict":
        for k, v in value.get("items", {}).items():
            yield from tensors_in(v, f"{name}[{k!r}]")


def call_tensors(call: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tensors a call was given, named ``argument 1``, ``num_classes=``, ...."""
    found: list[tuple[str, dict[str, Any]]] = []
    for i, a in enumerate(call.get("args", [])):
        found += tensors_in(a, f"argument {i + 1}")
    for k, v in call.get("kwargs", {}).items():
        found += tensors_in(v, f"{k}=")
    return found


def diff_lines(diff: dict[str, Any], got: Any = None, expected: Any = None) -> list[str]:
    """What differs, in a few short lines (the tensor-aware diff)."""
    kind = diff.get("kind")
    if not kind:
        return []
    if kind == "values":
        n, total = diff.get("mismatched"), diff.get("total")
        lines = [f"{n} of {total} {'element differs' if total == 1 else 'elements differ'}"]
        if diff.get("max_abs_error") is not None:
            lines.append(f"max absolute error {diff['max_abs_error']:.6g}")
        if diff.get("max_rel_error") is not None:
            lines.append(f"max relative error {diff['max_rel_error']:.6g}")
        if diff.get("first_indices"):
            shown = ", ".join(str(tuple(i)) for i in diff["first_indices"])
            lines.append(f"first differing indices: {shown}")
        return lines
    if kind in ("dtype", "shape", "device") and is_tensor(got) and is_tensor(expected):
        g, e = got.get(kind), expected.get(kind)
        if kind == "shape":
            g, e = tuple(g or ()), tuple(e or ())
        return [f"{kind} differs: got {g}, expected {e}"]
    if kind == "type":
        return [f"type differs: got {value_text(got)}, expected {value_text(expected)}"]
    if kind == "length":
        return ["number of items differs"]
    return [f"{kind} differs"]


def differing_field(test: Mapping[str, Any]) -> str:
    """``dtype``/``shape``/``device`` when that is what a mismatch is about, else ``""``."""
    kind = ((test.get("counterexample") or {}).get("diff") or {}).get("kind", "")
    return kind if kind in ("dtype", "shape", "device") else ""


def tensor_block(name: str, t: dict[str, Any], indent: str = "  ") -> list[str]:
    """A tensor as a few plain-text lines: name, shape/dtype/stride, values."""
    stride = t.get("stride")
    head = (f"{name}: shape {tuple(t.get('shape') or ())}, dtype {t.get('dtype')}"
            + (f", stride {tuple(stride)}" if stride is not None else "")
            + (f", device {t['device']}" if t.get("device") not in (None, "cpu") else "")
            + (" (long: middle values elided)" if t.get("elided") else ""))
    body = values_text(t).splitlines() or [""]
    return [indent + head] + [indent + "  " + line for line in body]


def counterexample_text(test: Mapping[str, Any]) -> str:
    """A failing property's counterexample as plain text (terminal, Gradescope, JUnit)."""
    cx = test.get("counterexample") or {}
    lines: list[str] = []
    for call in cx.get("calls", []):
        lines.append(f"call: {call_text(call)}")
        for name, t in call_tensors(call):
            lines += tensor_block(name, t)
        if "raised" in call:
            lines.append(f"  raised {call['raised']}")
        elif "result" in call:
            lines += _returned_lines(call["result"], cx.get("got"))
    for which in ("expected", "got"):
        if which in cx:
            value = cx[which]
            blocks = list(tensors_in(value, which))
            lines += [line for name, t in blocks for line in tensor_block(name, t, "")] \
                if blocks else [f"{which}: {value_text(value)}"]
    diff = diff_lines(cx.get("diff") or {}, cx.get("got"), cx.get("expected"))
    if diff:
        lines.append("diff: " + "; ".join(diff))
    if cx.get("example") and not cx.get("calls"):
        lines.append(cx["example"])
    return "\n".join(lines)


def _returned_lines(result: Any, got: Any) -> list[str]:
    if result == got and got is not None:
        return [f"  returned {value_text(result)} (shown below as got)"]
    if is_tensor(result):
        return tensor_block("returned", result)
    lines = [f"  returned {value_text(result)}"]
    for name, t in tensors_in(result, "returned"):
        lines += tensor_block(name, t, "    ")
    return lines


def problem_text(test: Mapping[str, Any]) -> str:
    """Message, counterexample and the student's traceback of a property, as plain text."""
    message, tb = split_traceback(test.get("message") or "")
    parts = [message, counterexample_text(test), tb]
    for stream, text in captured_output(test):
        parts.append(f"captured {stream}:\n{text.rstrip()}")
    return "\n".join(p for p in parts if p)


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` without the control characters XML and terminals cannot carry."""
    return _XML_BAD.sub("\ufffd", text)
