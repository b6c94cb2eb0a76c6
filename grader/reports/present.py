"""Words and text for reports, shared by the HTML report, the terminal and the exports.

Everything here reads the plain data of ``results.json`` (see ``grader.core.results_json``
and ``grader.contract.describe``) and returns plain strings: no HTML, no rich markup. The
HTML report escapes what it gets from here; the terminal prints it as plain text.
Values, calls and counterexamples have their own module, ``grader.reports.counterexamples``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from grader.core import differences, i18n
from grader.core.i18n import N_, Message, Translator
from grader.core.outcomes import CUDA_REASON, ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT
from grader.core.results_json import Results, message_text

# Outcomes (of a property) and statuses (of an exercise) in a learner's words.
LABELS = {
    PASSED: N_("passed"),
    FAILED: N_("failed"),
    ERROR: N_("error"),
    TIMED_OUT: N_("timed out"),
    NOT_ATTEMPTED: N_("not attempted"),
    NOT_RUN: N_("not run here"),
    "partial": N_("partly passed"),
}

# Outcomes that come with an explanation worth reading (message, counterexample).
PROBLEMS = (FAILED, ERROR, TIMED_OUT)

# Problems first, then what is still to do, then what went well.
_ORDER = {FAILED: 0, ERROR: 0, TIMED_OUT: 0, NOT_ATTEMPTED: 1, NOT_RUN: 2, PASSED: 3}

# What the grader writes above the student's trimmed traceback in a kept message (in English,
# as results.json keeps it); ``traceback_text`` shows it in the reader's language.
TRACEBACK_MARK = N_("Traceback (student code only):")

_Test = TypeVar("_Test", bound=Mapping[str, Any])  # a test's record: ``TestResult`` or a plain dict


def words(t: Translator | None) -> Translator:
    """``t``, or the language of the running command (what prints to a terminal)."""
    return t if t is not None else i18n.current()


def label(outcome_or_status: str, t: Translator | None = None) -> str:
    """``not_attempted`` -> ``not attempted`` (in ``t``'s language)."""
    if outcome_or_status in LABELS:
        return words(t)(LABELS[outcome_or_status])
    return outcome_or_status.replace("_", " ")


def number(x: float | int | None, digits: int = 2) -> str:
    """A score for people: at most ``digits`` decimals, no trailing zeros."""
    if x is None:
        return "–"
    text = f"{round(float(x), digits):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def kib(n: int | float) -> str:
    """``65.5 KiB``: a size in bytes, in KiB to one decimal."""
    return f"{number(n / 1024, 1)} KiB"


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


def property_title(test_name: str, titles: Mapping[str, str] | None = None) -> str:
    """``test_dtype_is_int64[3]`` -> ``dtype is int64 [3]`` (the readable part of a name),
    or its title in ``titles`` (the course's translation: ``drill_texts.property_titles``)."""
    if titles and test_name in titles:
        return titles[test_name]
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


def message(test: Mapping[str, Any], t: Translator | None = None) -> str:
    """A test's message in ``t``'s language (``results_json.message_text``)."""
    return message_text(dict(test), words(t))


def reason(test: Mapping[str, Any], t: Translator | None = None) -> str:
    """Why a property was lost, in one line: its message's first line (the student's
    traceback left out), or its outcome when there is no message."""
    text, _ = split_traceback(message(test, t))
    return first_line(text) or label(test["outcome"], t)


def reasons(exercise: Mapping[str, Any], t: Translator | None = None) -> list[dict[str, Any]]:
    """The reasons the exercise lost properties for, the heaviest (in total weight) first:
    properties that show the same difference (``differences.mistake``: a dtype got X
    expected Y, the same function raising the same exception, values of the same
    function) are one reason, a property that another defect stopped among them.
    ``{"reason" (in words: the heaviest property that failed of its own, else what
    stopped them), "tests" (the records, heaviest first), "weight" (their total)}``."""
    groups: dict[tuple[str, ...], list[Any]] = {}
    for test in problems(exercise):
        groups.setdefault(differences.mistake(test), []).append(test)
    found = [{"reason": _group_reason(ts, t), "tests": ts, "weight": sum(_weight(x) for x in ts)}
             for ts in groups.values()]
    return sorted(found, key=lambda g: -g["weight"])


def reasons_worth_listing(found: list[dict[str, Any]]) -> bool:
    """Whether a list of ``reasons`` tells the reader something the properties do not:
    several reasons, or one that several properties lost with different messages (one
    message on every property, a file that does not load, is said once anyway)."""
    if len(found) != 1:
        return len(found) > 1
    return len({str(t.get("message") or "") for t in found[0]["tests"]}) > 1


def _group_reason(tests: list[Any], t: Translator | None) -> str:
    """A reason's words: the heaviest property that failed of its own, else the defect
    that stopped the heaviest (without the "stopped by another defect" it says)."""
    own = next((x for x in tests if not differences.is_stopped(x)), None)
    if own is not None:
        return reason(own, t)
    heaviest = tests[0]
    kept = Message.from_json(heaviest.get("message_id"))
    inner = differences.unstopped(kept) if kept is not None else None
    if inner is None:
        return reason(heaviest, t)
    record: dict[str, Any] = {"message": str(inner), "outcome": heaviest["outcome"]}
    if isinstance(inner, Message):
        record["message_id"] = inner.to_json()
    if heaviest.get("phrases"):
        record["phrases"] = heaviest["phrases"]
    return reason(record, t)


def split_traceback(message: str) -> tuple[str, str]:
    """(message, traceback) where the grader appended the student's trimmed traceback."""
    head, mark, tail = message.partition(TRACEBACK_MARK)
    return (head.rstrip(), (mark + tail).rstrip()) if mark else (message.rstrip(), "")


def traceback_text(traceback: str, t: Translator | None = None) -> str:
    """The student's traceback ``split_traceback`` gave, under its label in ``t``'s words
    (the frames as Python wrote them)."""
    if not traceback.startswith(TRACEBACK_MARK):
        return traceback
    return words(t)(TRACEBACK_MARK) + traceback[len(TRACEBACK_MARK):]


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# What gradings before issue 26 wrote for a cuda test: advice that graded the reference.
_OLD_CUDA_REASON = "needs a CUDA device; this runner has none (run tox -e cuda on a CUDA machine)"


def not_run_reason(test: Mapping[str, Any], t: Translator | None = None) -> str:
    """Why a test was not run here, in today's words (older results.json told a student
    to run ``tox -e cuda``, which grades the reference, not their work)."""
    t = words(t)
    text = message(test, t).strip() or t.gettext("no reason given")
    if text == _OLD_CUDA_REASON or (text == CUDA_REASON and not test.get("message_id")):
        return t(CUDA_REASON)
    return text


def not_run_here(results: Results, t: Translator | None = None) -> list[dict[str, Any]]:
    """Tests not run on this machine, grouped by reason: [{reason, tests: [ids]}]."""
    groups: dict[str, list[str]] = {}
    for ex in results["exercises"]:
        for test in ex["tests"]:
            if test["outcome"] == NOT_RUN:
                groups.setdefault(not_run_reason(test, t), []).append(f"{ex['id']}::{test['name']}")
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

_ENVIRONMENT_LABELS = {"cuda_available": N_("CUDA"), "workers": N_("workers"), "shrink": N_("shrinking"),
                       "examples": N_("examples"), "budgets": N_("time budgets"), "grading": N_("graded on"),
                       "isolation": N_("isolation")}


def environment_items(environment: Mapping[str, Any] | None,
                      t: Translator | None = None) -> list[tuple[str, str]]:
    """What ``results.json``'s ``environment`` says, as (label, sentence) pairs for people:
    never a Python dict or list (``budgets``, ``grading``, ``examples`` are summed up)."""
    t = words(t)
    items = []
    for key, value in (environment or {}).items():
        if value is None or value == {} or value == []:
            continue
        text = _ENVIRONMENT_TEXT.get(key, _plain)(value, t)
        if text:
            name = _ENVIRONMENT_LABELS.get(key)
            items.append((t(name) if name else key.replace("_", " "), text))
    return items


def _plain(value: Any, t: Translator) -> str:
    """Any JSON value as words: ``yes``/``no``, numbers, ``key value, ...``; never a repr."""
    if isinstance(value, bool):
        return t.gettext("yes") if value else t.gettext("no")
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{str(k).replace('_', ' ')} {_plain(v, t)}" for k, v in value.items()
                         if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v, t) for v in value)
    return str(value)


def _cuda_text(value: Any, t: Translator) -> str:
    if isinstance(value, bool):
        return t.gettext("available") if value else t.gettext("not available")
    return _plain(value, t)


def _workers_text(value: Any, t: Translator) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return t.gettext("one process") if value <= 1 else t.gettext("{n} in parallel", n=value)
    return _plain(value, t)


def _shrink_text(value: Any, t: Translator) -> str:
    if isinstance(value, bool):
        return (t.gettext("on (smallest failing inputs)") if value
                else t.gettext("off (failing inputs as first found)"))
    return _plain(value, t)


def _isolation_text(value: Any, t: Translator) -> str:
    if not isinstance(value, Mapping):
        return _plain(value, t)
    layers = value.get("layers") or {}
    mode = str(value.get("mode") or "?")
    modes = {"none": t.gettext("none (your code ran in the grader's own process)"),
             "process": t.gettext("process (a clean worker process, not confined)"),
             "sandbox": t.gettext("sandbox")}
    text = modes.get(mode, mode)
    if isinstance(layers, Mapping) and layers:
        text += t.gettext(": ") + t.gettext(", ").join(
            f"{layer} {t.gettext('on') if state == 'on' else state}" for layer, state in layers.items())
    return text


def _examples_text(value: Any, t: Translator) -> str:
    public = t.gettext("public (the ones in your tests)")
    if not isinstance(value, Mapping):
        return public if value == "public" else _plain(value, t)
    if value.get("drawn") == "public":
        return public
    if value.get("drawn") == "secret":
        widened = value.get("widened")
        wider = isinstance(widened, (int, float)) and widened != 1
        secret = value.get("secret")
        if secret and wider:
            return t.gettext("official: drawn from the course secret {secret}, ranges {factor}× wider",
                             secret=secret, factor=number(widened))
        if secret:
            return t.gettext("official: drawn from the course secret {secret}", secret=secret)
        if wider:
            return t.gettext("official: drawn from the course secret, ranges {factor}× wider",
                             factor=number(widened))
        return t.gettext("official: drawn from the course secret")
    return _plain(value, t)


def _budgets_text(value: Any, t: Translator) -> str:
    if not isinstance(value, Mapping):
        return _plain(value, t)
    drills = value.get("drills") or {}
    source = value.get("source") or {}
    if not isinstance(drills, Mapping) or not drills:
        return _plain(value, t)
    seconds = [float(s) for s in drills.values() if isinstance(s, (int, float))]
    measured = sum(1 for s in source.values() if s == "reference") if isinstance(source, Mapping) else 0
    text = t.ngettext("{n} drill, {seconds} s in all", "{n} drills, {seconds} s in all", len(drills),
                      seconds=number(sum(seconds), 0))
    if isinstance(value.get("factor"), (int, float)) and isinstance(value.get("margin_s"), (int, float)):
        factor, margin = number(value["factor"]), number(value["margin_s"])
        if measured < len(drills):
            text += t.ngettext(" ({factor}× the reference's time + {margin} s; {n} drill without a "
                               "reference time)",
                               " ({factor}× the reference's time + {margin} s; {n} drills without a "
                               "reference time)", len(drills) - measured, factor=factor, margin=margin)
        else:
            text += t.gettext(" ({factor}× the reference's time + {margin} s)", factor=factor, margin=margin)
    return text


def _grading_text(value: Any, t: Translator) -> str:
    if not isinstance(value, Mapping):
        return _plain(value, t)
    text = str(value.get("worker") or "?")
    if value.get("cuda_worker"):
        text += t.gettext("; cuda tests on {worker}", worker=value["cuda_worker"])
    return text


_ENVIRONMENT_TEXT = {"cuda_available": _cuda_text, "workers": _workers_text, "shrink": _shrink_text,
                     "isolation": _isolation_text, "examples": _examples_text,
                     "budgets": _budgets_text, "grading": _grading_text}


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` without the control characters XML and terminals cannot carry."""
    return _XML_BAD.sub("\ufffd", text)
