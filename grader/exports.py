"""Machine-readable exports of ``results.json``: Gradescope's results and JUnit XML.

Both are made from the results document alone (like the HTML report), so they
can be written again later with ``torchdrill report``.

Gradescope (``DIR/gradescope/results.json``; an autograder copies it to
``/autograder/results/results.json``): one Gradescope test per property, named
``<exercise id>: <test name>``, worth its share of the exercise's points.
Properties marked ``hidden`` are ``after_published``. Properties not run here
are worth 0 of 0 and say why, so a pending property never shows as a zero.

JUnit (``--junit FILE``): one ``<testsuite>`` per exercise, one ``<testcase>``
per property. ``failed`` and ``not_attempted`` are failures (both cost points;
``skipped`` would let a stub look green on a CI dashboard), ``error`` and
``timed_out`` are errors, ``not_run`` is skipped with its reason.
"""

from __future__ import annotations

import json
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from grader import present
from grader.outcomes import ERROR, FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, TIMED_OUT

GRADESCOPE_DIR = "gradescope"
GRADESCOPE_NAME = "results.json"
MAX_OUTPUT = 8000  # characters of explanation per Gradescope test / JUnit element


# ------------------------------------------------------------------ Gradescope

def gradescope(results: dict[str, Any]) -> dict[str, Any]:
    """Gradescope's autograder ``results.json`` for a torchdrill results document."""
    tests = []
    for ex in results["exercises"]:
        for t in ex["tests"]:
            tests.append(_gradescope_test(ex, t))
    return {
        "score": results["score"],
        "max_score": results["max_score"],
        "output": _gradescope_summary(results),
        "output_format": "text",  # plain text: submission strings are never rendered as HTML
        "test_output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def _gradescope_test(ex: dict[str, Any], t: dict[str, Any]) -> dict[str, Any]:
    share = present.property_points(ex, t)
    worth = round(share, 4) if share is not None else 0.0
    passed = t["outcome"] == PASSED
    test: dict[str, Any] = {
        "name": f"{ex['id']}: {t['name']}",
        "score": worth if passed else 0.0,
        "max_score": worth,
        "output": _truncate(_test_output(t)),
        "visibility": "after_published" if t.get("hidden") else "visible",
        "tags": [ex["id"], *t.get("markers", [])],
    }
    if t["outcome"] != NOT_RUN:
        test["status"] = "passed" if passed else "failed"
    return test


def _test_output(t: dict[str, Any]) -> str:
    outcome = present.label(t["outcome"])
    if t["outcome"] == PASSED:
        return outcome
    if t["outcome"] in present.PROBLEMS:
        return f"{outcome}: {present.problem_text(t)}"
    return f"{outcome}: {t.get('message') or ''}".rstrip(": ")


def _gradescope_summary(results: dict[str, Any]) -> str:
    lines = [f"torchdrill {results.get('grader_version', '')}: "
             f"{present.score_text(results['score'], results['max_score'])} points"]
    for ex in results["exercises"]:
        score = ("pending (not run here)" if ex["status"] == NOT_RUN
                 else present.score_text(ex["score"], ex["max_score"]))
        lines.append(f"{ex['id']}: {score}, {present.label(ex['status'])}")
    return "\n".join(lines)


def write_gradescope(results: dict[str, Any], out: Path) -> Path:
    """Write ``out/gradescope/results.json``; returns its path."""
    path = out / GRADESCOPE_DIR / GRADESCOPE_NAME
    _atomic_write(path, json.dumps(gradescope(results), indent=1) + "\n")
    return path


# ------------------------------------------------------------------ JUnit

def junit(results: dict[str, Any]) -> ET.ElementTree:
    """A JUnit XML tree: ``<testsuites>`` of one ``<testsuite>`` per exercise."""
    root = ET.Element("testsuites", name=f"torchdrill: {_xml(results.get('submission', ''))}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for ex in results["exercises"]:
        suite = _junit_suite(ex, results.get("graded_at", ""))
        root.append(suite)
        for key in ("tests", "failures", "errors", "skipped"):
            totals[key] += int(suite.get(key, "0"))
        totals["time"] += float(suite.get("time", "0"))
    for key, value in totals.items():
        root.set(key, f"{value:.3f}" if key == "time" else str(value))
    return ET.ElementTree(root)


def _junit_suite(ex: dict[str, Any], timestamp: str) -> ET.Element:
    suite = ET.Element("testsuite", name=ex["id"])
    if timestamp:
        suite.set("timestamp", timestamp)
    props = ET.SubElement(suite, "properties")
    for key in ("title", "points", "score", "max_score", "status"):
        ET.SubElement(props, "property", name=key, value=_xml(str(ex.get(key, ""))))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    elapsed = 0.0
    for t in ex["tests"]:
        case, kind = _junit_case(ex, t)
        suite.append(case)
        if kind:
            counts[kind] += 1
        elapsed += t.get("duration_s", 0.0)
    suite.set("tests", str(len(ex["tests"])))
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{elapsed:.3f}")
    return suite


_JUNIT_KIND = {FAILED: ("failure", "failures"), NOT_ATTEMPTED: ("failure", "failures"),
               ERROR: ("error", "errors"), TIMED_OUT: ("error", "errors"),
               NOT_RUN: ("skipped", "skipped")}


def _junit_case(ex: dict[str, Any], t: dict[str, Any]) -> tuple[ET.Element, str]:
    """A ``<testcase>`` and which suite counter it adds to ("" when it passed)."""
    case = ET.Element("testcase", classname=ex["id"].replace("/", "."), name=_xml(t["name"]),
                      time=f"{t.get('duration_s', 0.0):.3f}")
    if t["outcome"] not in _JUNIT_KIND:
        return case, ""
    tag, counter = _JUNIT_KIND[t["outcome"]]
    message = present.first_line(present.split_traceback(t.get("message") or "")[0])
    child = ET.SubElement(case, tag, message=_xml(message or present.label(t["outcome"])))
    if tag != "skipped":
        child.set("type", t["outcome"])
        child.text = _xml(_truncate(present.problem_text(t)))
    return case, counter


def write_junit(results: dict[str, Any], path: Path) -> Path:
    """Write the JUnit XML for ``results`` to ``path``; returns it."""
    tree = junit(results)
    ET.indent(tree)
    text = ET.tostring(tree.getroot(), encoding="unicode", xml_declaration=False)
    _atomic_write(path, '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
    return path


# ------------------------------------------------------------------ helpers

def _xml(text: str) -> str:
    """Text XML 1.0 can carry (submission output may hold any control character)."""
    return present.printable(text)


def _truncate(text: str, limit: int = MAX_OUTPUT) -> str:
    return text if len(text) <= limit else text[: limit - 20] + "\n... (truncated)"


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)  # mkstemp makes it private; an export is for other tools to read
    os.replace(tmp, path)
