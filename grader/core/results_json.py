"""``results.json``: the one record of a grading run, and the one model of it.

Every reader and writer of results goes through this module: ``build`` assembles
them from per-test records, ``read``/``validate`` refuse what is not a torchdrill
results document, ``rescore`` computes every score from the test outcomes,
``replace_exercises`` lets newer exercises replace older ones (``check`` and
``grade --only`` on the learner's record, ``grader.core.record``; ``grade-all
--only``) and ``fold`` merges another runner's outcomes test by test (a CUDA
runner's). The document's shape is typed below
(``Results``, ``ExerciseResult``, ``TestResult``): plain JSON-ready dicts, so
the gradebook stores them and the report templates read them as they are.

Written atomically (temporary file, then rename), so a crash never leaves a
half-written file behind.
"""

from __future__ import annotations

import copy
import hashlib
import json
import platform
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import grader
from grader.core import drill_texts, engine_phrases
from grader.core.errors import UsageError
from grader.core.files import write_atomically
from grader.core.i18n import Message, Translator
from grader.core.outcomes import NOT_RUN, TEST_OUTCOMES
from grader.core.scoring import score_exercise

SCHEMA_VERSION = 1


class ResultsError(UsageError, ValueError):
    """Not a torchdrill results document, or results that do not mix; one sentence."""


# ---------------------------------------------------------------- the document's shape

class TestResult(TypedDict):
    """One property's outcome (``name`` is unique within its exercise)."""
    name: str
    outcome: str  # one of ``grader.core.outcomes.TEST_OUTCOMES``
    weight: float
    message: str
    counterexample: dict[str, Any] | None  # example, calls, got, expected, diff
    duration_s: float
    charged_s: NotRequired[float]  # against the drill's budget; older results.json lack it
    hidden: bool
    markers: list[str]
    stdout: str
    stderr: str


class ExerciseResult(TypedDict):
    id: str
    title: str
    points: float
    score: float
    max_score: float
    status: str  # one of ``grader.core.outcomes.EXERCISE_STATUSES``
    static_flags: list[dict[str, Any]]  # ``grader.grading.scan`` findings, never scored
    tests: list[TestResult]
    hints_used: NotRequired[int]
    # a notebook submission (``grader.intake.notebooks``): the notebook, each graded
    # function's cell and line, the functions taken from the stub; absent for .py files
    source: NotRequired[dict[str, Any]]
    # "quick" when a learner's ``torchdrill check`` graded it (``grader.learner.check``)
    profile: NotRequired[str]


class Results(TypedDict):
    schema: int
    submission: str
    score: float
    max_score: float
    pending_points: float
    suite_hash: str | None
    graded_at: str
    grader_version: str
    environment: dict[str, Any]
    exercises: list[ExerciseResult]
    # a term's grade (``grader.core.term_grades``): lateness, overrides, final points and
    # their history; set where the course has assignments or the student an override
    term: NotRequired[dict[str, Any]]


# ---------------------------------------------------------------- building

@dataclass
class TestRecord:
    exercise: str
    name: str
    outcome: str
    weight: float = 1.0
    message: str = ""
    counterexample: dict[str, Any] | None = None
    # the message as an id and its parameters (grader.core.i18n.Message.to_json), where the
    # engine wrote it: ``message_text`` renders it in any language; ``message`` is its English
    message_id: dict[str, Any] | None = None
    duration_s: float = 0.0
    # what the test was charged against its drill's budget (``grader.sandbox.clock``): its
    # wall time less the time the grading waited for a CPU
    charged_s: float = 0.0
    hidden: bool = False
    markers: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


@dataclass
class ExerciseInfo:
    id: str
    points: float
    title: str = ""
    # grader.grading.scan findings (``Finding.as_json()``): shown beside the score, never scored
    static_flags: list[dict[str, Any]] = field(default_factory=list)


def suite_hash(tests_dir: Path, secret_digest: str | None = None) -> str:
    """A hash of the test suite (every file under tests/), the grader version and the
    course secret's digest (an official grading's examples): two gradings with the same
    hash used the same properties and examples."""
    digest = hashlib.sha256(grader.__version__.encode())
    if secret_digest:
        digest.update(b"secret\0" + secret_digest.encode() + b"\0")
    for path in sorted(p for p in tests_dir.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(path.relative_to(tests_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build(submission: str, exercises: dict[str, ExerciseInfo],
          tests: list[TestRecord], environment: dict[str, Any] | None = None,
          suite: str | None = None) -> Results:
    """Assemble the results document from per-test records (scores computed here)."""
    by_exercise: dict[str, list[TestRecord]] = {eid: [] for eid in sorted(exercises)}
    for t in tests:
        by_exercise.setdefault(t.exercise, []).append(t)
    rows: list[ExerciseResult] = []
    for eid, records in by_exercise.items():
        info = exercises[eid]
        records.sort(key=lambda r: r.name)
        rows.append({"id": eid, "title": info.title, "points": info.points, "score": 0.0,
                     "max_score": 0.0, "status": NOT_RUN, "static_flags": list(info.static_flags),
                     "tests": [_test_json(r) for r in records]})
    return rescore({
        "schema": SCHEMA_VERSION,
        "submission": submission,
        "score": 0.0,
        "max_score": 0.0,
        "pending_points": 0.0,
        "suite_hash": suite,
        "graded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "grader_version": grader.__version__,
        "environment": {"python": platform.python_version(), **(environment or {})},
        "exercises": rows,
    }, copy_first=False)


def _test_json(r: TestRecord) -> TestResult:
    d = asdict(r)
    del d["exercise"]
    d["duration_s"] = round(d["duration_s"], 4)
    d["charged_s"] = round(d["charged_s"], 4)
    return cast(TestResult, d)


# ---------------------------------------------------------------- scores

def rescore(results: Results, *, copy_first: bool = True) -> Results:
    """``results`` (a copy, unless ``copy_first`` is False) with every exercise's score,
    max_score and status, and the totals, computed from the test outcomes. Exercise
    and test order are kept."""
    if copy_first:
        results = copy.deepcopy(results)
    for ex in results["exercises"]:
        scored = score_exercise(ex["points"], [(t["outcome"], t["weight"]) for t in ex["tests"]])
        ex["score"], ex["max_score"], ex["status"] = scored.score, scored.max_score, scored.status
    results["score"], results["max_score"], results["pending_points"] = totals(results["exercises"])
    return results


def totals(exercises: Iterable[ExerciseResult]) -> tuple[float, float, float]:
    """(score, max_score, pending_points) of scored exercises: pending points are those
    of exercises not run here (their cuda tests, say), left out of the maximum."""
    rows = list(exercises)
    return (round(sum(ex["score"] for ex in rows), 4),
            round(sum(ex["max_score"] for ex in rows), 4),
            round(sum(ex["points"] for ex in rows if ex["status"] == NOT_RUN), 4))


# ---------------------------------------------------------------- reading, writing

def write(results: Results, path: Path) -> None:
    write_atomically(path, json.dumps(results, indent=1, sort_keys=False) + "\n")


def read(path: Path) -> Results:
    """The results at ``path``, validated; ``ResultsError`` (a ValueError) names the file
    and what is wrong; ``OSError`` when it cannot be read."""
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path} is not a torchdrill results file: {exc}") from None
    if isinstance(data, dict):
        for exercise in data.get("exercises") or []:  # written before the static scan existed
            if isinstance(exercise, dict):
                exercise.setdefault("static_flags", [])
    return validate(data, str(path))


def validate(data: Any, what: str) -> Results:
    """``data`` if it is a torchdrill results document, else ``ResultsError`` saying why."""
    def bad(why: str) -> ResultsError:
        return ResultsError(f"{what} is not a torchdrill results file (schema {SCHEMA_VERSION}): {why}")

    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
        raise bad(f"not a dict with schema {SCHEMA_VERSION}")
    for key in ("score", "max_score"):
        if not isinstance(data.get(key), (int, float)):
            raise bad(f"{key} is not a number")
    exercises = data.get("exercises")
    if not isinstance(exercises, list):
        raise bad("exercises is not a list")
    for ex in exercises:
        if not isinstance(ex, dict) or not isinstance(ex.get("id"), str) \
                or not isinstance(ex.get("points"), (int, float)) or not isinstance(ex.get("tests"), list):
            raise bad("an exercise lacks its id, points or tests")
        names = set()
        for t in ex["tests"]:
            if not isinstance(t, dict) or not isinstance(t.get("name"), str) \
                    or not isinstance(t.get("weight"), (int, float)):
                raise bad(f"a test of {ex['id']} lacks its name or weight")
            if t.get("outcome") not in TEST_OUTCOMES:
                raise bad(f"{ex['id']}::{t['name']} has an unknown outcome {t.get('outcome')!r}")
            if t["name"] in names:
                raise bad(f"{ex['id']}::{t['name']} appears twice")
            names.add(t["name"])
    return cast(Results, data)


# ---------------------------------------------------------------- combining

def replace_exercises(old: Results, new: Results, order: Iterable[str] = ()) -> Results:
    """``new``'s exercises replace the same exercises of ``old``; the others stay as
    they were scored. The result is ``new`` with every exercise, sorted by ``order``
    (ids not in it last), then by id, and the totals of them all."""
    rows = {ex["id"]: ex for ex in old["exercises"]} | {ex["id"]: ex for ex in new["exercises"]}
    position = {eid: i for i, eid in enumerate(order)}
    merged = copy.deepcopy(new)
    merged["exercises"] = sorted(copy.deepcopy(list(rows.values())),
                                 key=lambda ex: (position.get(ex["id"], len(position)), ex["id"]))
    merged["score"], merged["max_score"], merged["pending_points"] = totals(merged["exercises"])
    return merged


@dataclass
class MergeReport:
    """What a merge did, by test id (``<exercise id>::<test name>``): ``replaced``
    not_run outcomes now real, ``unchanged`` incoming tests that changed nothing
    (not_run, or the same outcome), ``conflicts`` real outcomes that differed (the
    existing one kept), ``unknown`` incoming tests not in the results (not added).
    ``submission``: the gradebook row merged into (None from ``fold``)."""
    replaced: int = 0
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    submission: int | None = None


def fold(results: Results, incoming: Any, now: str | None = None) -> tuple[Results, MergeReport]:
    """Merge ``incoming`` (another runner's results of the same submission, say the
    ``cuda`` tests from a GPU machine) into ``results``, test by test; returns the
    merged results (a rescored copy; ``results`` is not changed) and what was done.

    An incoming real outcome replaces a ``not_run`` one; an incoming ``not_run``
    replaces nothing; a real outcome that differs from a real one already there is
    a conflict (the one there is kept: neither runner is more right than the
    other); tests unknown to ``results`` are reported, not added. When anything
    was replaced, ``environment.merged`` gets {from, tests, at}. Raises
    ResultsError when ``incoming`` is not results, or the suite hashes differ or
    either is unknown.
    """
    incoming = validate(incoming, "the results to merge")
    ours_suite, theirs_suite = results.get("suite_hash"), incoming.get("suite_hash")
    if ours_suite is None or theirs_suite is None or ours_suite != theirs_suite:
        raise ResultsError(f"the incoming results were graded with test suite {theirs_suite}, "
                           f"the current submission with {ours_suite}; outcomes of different "
                           "suites do not mix")
    merged = copy.deepcopy(results)
    report = _apply(merged, incoming)
    if not report.replaced:
        return merged, report
    merged = rescore(merged, copy_first=False)
    merged.setdefault("environment", {}).setdefault("merged", []).append(
        {"from": _source(incoming), "tests": report.replaced,
         "at": now or datetime.now(UTC).isoformat(timespec="seconds")})
    return merged, report


def _apply(results: Results, incoming: Results) -> MergeReport:
    """Apply the merge rules to ``results`` in place (scores untouched)."""
    ours = {(ex["id"], t["name"]): (ex, i) for ex in results["exercises"]
            for i, t in enumerate(ex["tests"])}
    report = MergeReport()
    theirs = sorted((((ex["id"], t["name"]), t) for ex in incoming["exercises"] for t in ex["tests"]),
                    key=lambda pair: pair[0])
    for key, test in theirs:
        test_id = f"{key[0]}::{key[1]}"
        if key not in ours:
            report.unknown.append(test_id)
            continue
        ex, i = ours[key]
        existing = ex["tests"][i]["outcome"]
        if test["outcome"] == NOT_RUN or test["outcome"] == existing:
            report.unchanged += 1
        elif existing == NOT_RUN:
            ex["tests"][i] = copy.deepcopy(test)
            report.replaced += 1
        else:
            report.conflicts.append(test_id)
    return report


def _source(incoming: Results) -> dict[str, Any]:
    """Where merged outcomes came from: the grader version, when, and the plain
    fields of the incoming environment (python, torch, cuda_available, host...)."""
    environment = incoming.get("environment") or {}
    source: dict[str, Any] = {"grader_version": incoming.get("grader_version"),
                              "graded_at": incoming.get("graded_at")}
    for key in sorted(environment):
        value = environment[key]
        if value is None or isinstance(value, (str, int, float, bool)):
            source[key] = value
    isolation = environment.get("isolation")
    if isinstance(isolation, dict) and "mode" in isolation:
        source["isolation"] = isolation["mode"]
    return source


# ---------------------------------------------------------------- comparing

def verdicts(results: Results) -> dict[str, Any]:
    """What must be identical between a grading with shrinking and one without: the
    scores, and whether each property passed, lost its points or did not count (the
    kind of a loss may differ: the shrinker can walk from a wrong answer to a smaller
    input that raises)."""
    lost = {"failed", "error", "timed_out"}
    return {"score": results["score"],
            **{e["id"]: (e["score"], [(t["name"], "lost" if t["outcome"] in lost else t["outcome"])
                                      for t in e["tests"]])
               for e in results["exercises"]}}


def message_text(record: dict[str, Any], t: Translator) -> str:
    """A test record's message in ``t``'s language: its kept id rendered, then whatever
    the message holds after its English (a student's traceback), or the text as
    written where it has no kept id (an older results.json). The course's own phrases
    in it (an assertion's sentence; a kept message's ``COURSE_PARAMS``) are translated
    where the record carries its drill's phrases (``grader.core.drill_texts.with_titles``
    adds them), and so are the engine's own words in them or in its ``ENGINE_PARAMS``
    (``grader.core.engine_phrases``). Any other parameter (a value, a name, the student's
    own words) is shown as written, in every language."""
    text = str(record.get("message") or "")
    course = record.get("phrases") or {}
    engine = engine_phrases.phrases(t) if t.lang != "en" else {}
    both = {**course, **{k: v for k, v in engine.items() if k not in course}}
    kept = Message.from_json(record.get("message_id"))
    if kept is None or not text.startswith(english := str(kept)):  # the course's sentence, or an older record's
        first, newline, rest = text.partition("\n")
        said = drill_texts.phrase(first, both) if both else None
        return said + newline + rest if said is not None else text
    params = dict(kept.params)
    for name, value in kept.params.items():
        table = both if name in COURSE_PARAMS else engine if name in ENGINE_PARAMS else None
        if table and isinstance(value, str):  # its first line: an assert's text has pytest's lines after it
            first, newline, rest = value.partition("\n")
            said = drill_texts.phrase(first, table)
            params[name] = said + newline + rest if said is not None else value
    return t.message(Message(kept.id, params)) + text[len(english):]


# A kept message's parameters that hold the course's words (``assert_same(what=...)``,
# ``expect_raises(when=...)``, a forbidden API's hint, the defect that stopped a property),
# and those that hold the engine's own (a values mismatch's summary, what a call changed):
# each translated where a phrase says it. The rest (values, names, the student's own words)
# are shown as written in every language.
COURSE_PARAMS = frozenset({"what", "when", "hint", "defect"})
ENGINE_PARAMS = frozenset({"summary", "changes"})
