"""The course: drills in order, grouped by topic, with their hints.

``course.toml`` at the course root is the one place that orders and groups the
drills; ``torchdrill list``, ``check``, ``watch``, ``hint``, the score table and
the report all read it from here. The drills themselves are still the test files
(``exercise_tests``): a drill with tests but missing from
``course.toml`` is appended at the end rather than hidden, and
``grader/tests/test_course.py`` asserts that the two name the same drills.

A course folder without ``course.toml`` (the engine's own test courses) still
works: its drills come from the test files, in id order, without hints.

This module is also the one place that knows the course's layout: where a course
is (``find_course``), which drills its tests define (``exercise_tests``), a
drill's id from its test file (``exercise_id``). Where a submission's exercises
are is the intake's question (``grader.intake``).
"""

from __future__ import annotations

import ast
import difflib
import re
import tomllib
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from grader.core.errors import UsageError
from grader.core.i18n import _

COURSE_FILE = "course.toml"
TESTS_DIR = "tests"


class CourseError(UsageError):
    """``course.toml`` is unreadable or names a drill that does not exist; one sentence."""


@dataclass(frozen=True)
class Drill:
    id: str                  # "tensors/one_hot"
    topic: str               # "tensors"
    hints: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The short name a learner types: ``one_hot``."""
        return PurePosixPath(self.id).name


@dataclass(frozen=True)
class Topic:
    name: str
    title: str
    drills: tuple[Drill, ...]


GRADE_DECIMALS = 2  # grades.csv: points rounded to this many decimals, unless course.toml says


@dataclass(frozen=True)
class Course:
    root: Path
    title: str
    topics: tuple[Topic, ...]
    grade_decimals: int = GRADE_DECIMALS  # ``[grades] decimals`` in course.toml
    language: str | None = None  # ``language`` in course.toml: what its learners read by default

    @property
    def drills(self) -> tuple[Drill, ...]:
        return tuple(d for t in self.topics for d in t.drills)

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.drills]

    def drill(self, drill_id: str) -> Drill:
        for d in self.drills:
            if d.id == drill_id:
                return d
        raise CourseError(_("unknown drill {drill}; known: {known}", drill=drill_id, known=", ".join(self.ids)))

    def resolve(self, name: str) -> str:
        """A drill id from what a learner typed: ``tensors/one_hot``, ``one_hot``, or
        a file of the drill (``exercises/tensors/one_hot.py``, its test file)."""
        given = name.strip()
        if given in self.ids:
            return given
        by_name = [d.id for d in self.drills if d.name == given]
        if len(by_name) == 1:
            return by_name[0]
        if len(by_name) > 1:
            raise CourseError(_("drill name {given} is ambiguous: say which of {drills}",
                                given=given, drills=", ".join(by_name)))
        by_path = [i for i in self.ids if _is_file_of(given, i)]
        if len(by_path) == 1:
            return by_path[0]
        if len(by_path) > 1:
            raise CourseError(_("{given} is ambiguous: say which of {drills}", given=given,
                                drills=", ".join(by_path)))
        raise CourseError(self.unknown(given))

    def unknown(self, given: str) -> str:
        """``unknown drill onehot: did you mean one_hot?``; without a close name, the
        drills by name (``torchdrill list`` shows them with their topics)."""
        counts = Counter(d.name for d in self.drills)
        names = {d.name: d.id for d in self.drills if counts[d.name] == 1}  # names that say one drill
        path = PurePosixPath(Path(given).as_posix())
        stem = path.stem.removeprefix("test_") if path.suffix == ".py" else path.name
        close = difflib.get_close_matches(stem.lower(), list(names), n=3, cutoff=0.6) \
            or difflib.get_close_matches(given.lower(), self.ids, n=3, cutoff=0.6)
        shown = list(dict.fromkeys(_short_name(c, names) for c in close))
        if len(shown) == 1:
            return _("unknown drill {given}: did you mean {name}?", given=given, name=shown[0])
        if shown:  # " or " between the names: the list a translator words as a whole
            return _("unknown drill {given}: did you mean {names} or {last}?", given=given,
                     names=_(" or ").join(shown[:-1]), last=shown[-1])
        return _("unknown drill {given}; the {count} drills are {names} (`torchdrill list` shows them)",
                 given=given, count=len(self.ids), names=", ".join(_short_name(i, names) for i in self.ids))

    def position(self, drill_id: str) -> int:
        """Index in course order; drills not in the course sort last."""
        ids = self.ids
        return ids.index(drill_id) if drill_id in ids else len(ids)

    def in_order(self, drill_ids: Iterable[str]) -> list[str]:
        """``drill_ids`` in course order; drills not in the course last, by id."""
        return sorted(set(drill_ids), key=lambda i: (self.position(i), i))


def _short_name(drill: str, names: dict[str, str]) -> str:
    """A drill's name (``drill`` may be one) when it names one drill only, else its id."""
    name = PurePosixPath(drill).name
    return name if names.get(name) in (drill, names.get(drill)) and name in names else drill


def _is_file_of(given: str, drill_id: str) -> bool:
    """Whether path ``given`` is the exercise, reference or test file of ``drill_id``."""
    path = PurePosixPath(Path(given).as_posix())
    if path.suffix != ".py":
        return False
    drill = PurePosixPath(drill_id)
    names = {f"{drill}.py", f"{drill.parent / ('test_' + drill.name)}.py"}
    text = path.as_posix()
    if len(path.parts) == 1:  # a bare file name: one_hot.py, test_one_hot.py
        return path.stem.removeprefix("test_") == drill.name
    return any(text == n or text.endswith("/" + n) for n in names)


def is_wide(ch: str) -> bool:
    """A character written without spaces around it (CJK ideographs, kana, fullwidth
    punctuation), two terminal cells wide: a line break next to one is not a space."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


def joined(text: str) -> str:
    """``text`` on one line, each run of whitespace one space, except a run that
    breaks a line between two wide characters (Chinese): that one is dropped, so a
    hint wrapped in the course's file reads as written."""
    parts = re.split(r"(\s+)", text.strip())
    out = []
    for i, part in enumerate(parts):
        if not part.isspace():
            out.append(part)
        elif not ("\n" in part and is_wide(parts[i - 1][-1]) and is_wide(parts[i + 1][0])):
            out.append(" ")
    return "".join(out)


# where a sentence ends: . ! ? before a space and a capital, or Chinese 。！？ (not after e.g.)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(`])|(?<=[。！？])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|vs|etc|cf)\.$")


def summary(doc: str) -> str:
    """A docstring's first sentence, whole: its first paragraph on one line (``joined``)
    up to the end of that sentence, never cut inside one."""
    paragraph = joined(re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0])
    for end in _SENTENCE_END.finditer(paragraph):
        if not _ABBREVIATION.search(paragraph[:end.start()]):
            return paragraph[:end.start()].strip()
    return paragraph


# ------------------------------------------------------------------ layout

def find_course(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding ``tests/conftest.py``."""
    for folder in (start, *start.parents):
        if (folder / TESTS_DIR / "conftest.py").is_file():
            return folder
    raise UsageError(_("no torchdrill course at {start} or above: expected a tests/ folder "
                       "with conftest.py (run inside the torchdrill checkout, or pass --course DIR)",
                       start=start))


def exercise_tests(course: Path) -> dict[str, Path]:
    """Exercise id -> its test module, learned from the files (no list to keep)."""
    return {exercise_id(path): path for path in sorted((course / TESTS_DIR).rglob("test_*.py"))}


def exercise_id(test_path: Path) -> str:
    """``.../tests/tensors/test_one_hot.py`` -> ``tensors/one_hot`` (the innermost
    ``tests`` folder is the course's)."""
    parts = test_path.parts
    top = len(parts) - 1 - parts[::-1].index(TESTS_DIR)
    return "/".join((*parts[top + 1:-1], test_path.stem.removeprefix("test_")))


def course_root(test_path: Path) -> Path:
    """The folder holding ``tests/`` (and ``exercises/``, ``reference/``) of a test file."""
    parts = test_path.parts
    return Path(*parts[:len(parts) - 1 - parts[::-1].index(TESTS_DIR)])


def load(root: Path) -> Course:
    """The course at ``root``: ``course.toml`` in its order, then any drill that has
    tests but is missing from it; without ``course.toml``, the test files' drills."""
    tested = list(exercise_tests(root)) if (root / "tests").is_dir() else []
    path = root / COURSE_FILE
    if not path.is_file():
        return _course_from_ids(root, tested)
    course = _parse(root, path)
    missing = [i for i in tested if i not in course.ids]
    if not missing:
        return course
    extra = _course_from_ids(root, missing).topics
    return Course(root, course.title, course.topics + extra, course.grade_decimals, course.language)


def listed_ids(root: Path) -> list[str]:
    """The drills ``course.toml`` itself lists, in order (none when there is no file)."""
    path = root / COURSE_FILE
    return [d.id for d in _parse(root, path).drills] if path.is_file() else []


def with_language(text: str, lang: str) -> str:
    """course.toml's ``text`` with its ``language`` set to ``lang`` (a handout in that
    language): the key replaced, or added before the first table."""
    lines = text.splitlines(keepends=True)
    setting = f'language = "{lang}"\n'
    for i, line in enumerate(lines):
        if re.match(r"\s*language\s*=", line):
            lines[i] = setting
            return "".join(lines)
        if line.lstrip().startswith("["):
            lines.insert(i, setting + "\n")
            return "".join(lines)
    return "".join(lines) + setting


def _course_from_ids(root: Path, ids: list[str]) -> Course:
    topics: dict[str, list[Drill]] = {}
    for drill_id in sorted(ids):
        topic = drill_id.split("/")[0] if "/" in drill_id else ""
        topics.setdefault(topic, []).append(Drill(drill_id, topic))
    return Course(root, root.name, tuple(Topic(name, name, tuple(drills))
                                         for name, drills in topics.items()))


def _parse(root: Path, path: Path) -> Course:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(_("cannot read {path}: {error}", path=path, error=exc)) from None
    topics = [_topic(path, i, t) for i, t in enumerate(_list(path, data, "topics"))]
    ids = [d.id for t in topics for d in t.drills]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise CourseError(_("{path} lists drill {drills} more than once", path=path, drills=", ".join(duplicated)))
    language = data.get("language")
    if language is not None and not isinstance(language, str):
        raise CourseError(_("{path}: 'language' must be a string such as \"en\" or \"zh_CN\"", path=path))
    return Course(root, str(data.get("title") or root.name), tuple(topics), _decimals(path, data), language)


def _decimals(path: Path, data: dict[str, Any]) -> int:
    grades = data.get("grades", {})
    if not isinstance(grades, dict):
        raise CourseError(_("{path}: 'grades' must be a table ([grades])", path=path))
    decimals = grades.get("decimals", GRADE_DECIMALS)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 6:
        raise CourseError(_("{path}: [grades] decimals must be a whole number from 0 to 6, not {value}",
                            path=path, value=repr(decimals)))
    return decimals


def _topic(path: Path, index: int, data: Any) -> Topic:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise CourseError(_("{path}: topic {number} needs a name", path=path, number=index + 1))
    name = data["name"]
    drills = tuple(_drill(path, name, d) for d in _list(path, data, "drills", topic=name))
    return Topic(name, str(data.get("title") or name), drills)


def _drill(path: Path, topic: str, data: Any) -> Drill:
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise CourseError(_("{path}: every drill of topic {topic} needs a name", path=path, topic=topic))
    drill_id = f"{topic}/{data['name']}"
    hints = data.get("hints", [])
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        raise CourseError(_("{path}: the hints of drill {drill} must be a list of non-empty strings",
                            path=path, drill=drill_id))
    return Drill(drill_id, topic, tuple(joined(h) for h in hints))


def _list(path: Path, data: dict[str, Any], key: str, topic: str | None = None) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        if topic is None:
            raise CourseError(_("{path}: '{key}' of the course must be a list of tables ([[{key}]])",
                                path=path, key=key))
        raise CourseError(_("{path}: '{key}' of topic {topic} must be a list of tables ([[{key}]])",
                            path=path, key=key, topic=topic))
    return value


# ------------------------------------------------------------------ drill facts

def test_file(root: Path, drill_id: str) -> Path:
    """``tests/<topic>/test_<name>.py`` of a drill."""
    drill = PurePosixPath(drill_id)
    return root / TESTS_DIR / drill.parent / f"test_{drill.name}.py"


def drill_facts(root: Path, drill_id: str) -> dict[str, Any]:
    """Points and title of a drill, read from its test module without importing it
    (``pytestmark = pytest.mark.exercise(points=...)`` and the module docstring's first
    sentence)."""
    path = test_file(root, drill_id)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {"points": None, "title": ""}
    return {"points": _marker_points(tree), "title": summary(ast.get_docstring(tree) or "")}


def _marker_points(tree: ast.Module) -> float | None:
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "exercise"):
            values = [k.value for k in node.keywords if k.arg == "points"] + node.args[:1]
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                    return float(value.value)
    return None


def annotate(results: Any, root: Path, hints_used: dict[str, int]) -> None:
    """Put the exercises of ``results`` in course order and record, on each, the
    hints the learner revealed (``grader.core.hints.revealed`` of the submission)."""
    try:
        course = load(root)
    except CourseError:
        course = None  # a broken course.toml must not stop a grade: keep id order
    if course is not None:
        results["exercises"].sort(key=lambda ex: (course.position(ex["id"]), ex["id"]))
    for ex in results["exercises"]:
        ex["hints_used"] = hints_used.get(ex["id"], 0)
