"""A drill's words in another language: its stub's docstrings, hints, property titles
and its tests' own failure phrases.

English is written where the course keeps it (the docstrings in ``exercises/``, the
hints in ``course.toml``). Every other language has one file per drill,
``locales/<lang>/<topic>/<drill>.toml`` at the course's root::

    module = \"\"\"The module docstring.\"\"\"
    hints = ["the first hint", "the second"]

    [docstrings]
    one_hot = \"\"\"The docstring of one_hot, dedented as inspect.cleandoc gives it.\"\"\"
    "Ring.step" = \"\"\"A method's docstring: keyed by its qualified name.\"\"\"

    [properties]
    test_dtype_is_int64 = "结果的数据类型是 int64"

    [phrases]
    "a label is negative" = "某个标签为负"

Only the words change between languages: ``translated_source`` swaps the docstrings
of a stub for the file's and leaves every other byte (signatures, code, imports)
as written, so the stub checks and the grading are the same in every language.
``problems`` lists what a translation lacks, adds, or changes in a code example.
"""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

from grader.core.syllabus import Course, CourseError, Drill, joined

LOCALES = "locales"
MAX_FILE_BYTES = 512 * 1024


@dataclass(frozen=True)
class DrillTexts:
    """One drill's words in one language (``module`` None: the docstring is not translated)."""

    module: str | None = None
    docstrings: dict[str, str] = field(default_factory=dict)
    hints: tuple[str, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)  # test function -> its title
    phrases: dict[str, str] = field(default_factory=dict)  # the tests' own failure phrases (``phrase``)


def path_of(course: Path, lang: str, drill_id: str) -> Path:
    return course / LOCALES / lang / f"{drill_id}.toml"


def _read(path: Path) -> dict[str, Any] | None:
    """A translation file's table, or None where there is none. A report renders
    the same drills' files once per student: a file is parsed once while it is
    unchanged (same size and modification time)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CourseError(f"{path}: cannot read the translation: {exc}") from None
    if info.st_size > MAX_FILE_BYTES:
        raise CourseError(f"{path}: over {MAX_FILE_BYTES} bytes")
    return _parsed(path, info.st_size, info.st_mtime_ns)


@cache
def _parsed(path: Path, size: int, mtime_ns: int) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"{path}: cannot read the translation: {exc}") from None


def load(course: Path, lang: str, drill_id: str) -> DrillTexts | None:
    """The drill's texts in ``lang``, or None where the course has none for it."""
    path = path_of(course, lang, drill_id)
    data = _read(path)
    if data is None:
        return None
    module, docs, hints = data.get("module"), data.get("docstrings", {}), data.get("hints", [])
    properties, phrases = data.get("properties", {}), data.get("phrases", {})
    if not isinstance(phrases, dict) or not all(isinstance(v, str) and v.strip() for v in phrases.values()):
        raise CourseError(f"{path}: [phrases] must map English phrases to their translations")
    if not isinstance(properties, dict) or not all(isinstance(v, str) and v.strip() for v in properties.values()):
        raise CourseError(f"{path}: [properties] must map test function names to titles")
    if module is not None and not isinstance(module, str):
        raise CourseError(f"{path}: 'module' must be a string")
    if not isinstance(docs, dict) or not all(isinstance(v, str) for v in docs.values()):
        raise CourseError(f"{path}: [docstrings] must map qualified names to strings")
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        raise CourseError(f"{path}: 'hints' must be a list of non-empty strings")
    unknown = set(data) - {"module", "docstrings", "hints", "properties", "phrases"}
    if unknown:
        raise CourseError(f"{path}: unknown keys {sorted(unknown)} "
                          "(module, hints, [docstrings], [properties], [phrases])")
    return DrillTexts(module, dict(docs), tuple(joined(h) for h in hints),
                      {k: joined(v) for k, v in properties.items()}, dict(phrases))


# ------------------------------------------------------------------ docstrings

def _documented(tree: ast.Module) -> list[tuple[str, ast.Constant]]:
    """(qualified name, docstring node) of every function and class at any depth but
    a function's inside, module excluded."""
    found: list[tuple[str, ast.Constant]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                doc = _doc_node(child)
                if doc is not None:
                    found.append((name, doc))
                if isinstance(child, ast.ClassDef):
                    walk(child, name + ".")
    walk(tree, "")
    return found


def _doc_node(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def docstrings(source: str) -> dict[str, str]:
    """Qualified name -> cleaned docstring of ``source`` ("" is the module's)."""
    tree = ast.parse(source)
    found = {name: inspect.cleandoc(str(node.value)) for name, node in _documented(tree)}
    module = _doc_node(tree)
    if module is not None:
        found[""] = inspect.cleandoc(str(module.value))
    return found


def translated_source(source: str, texts: DrillTexts) -> str:
    """``source`` with each docstring ``texts`` has swapped for it; every other byte
    as written (a docstring the texts lack stays English)."""
    tree = ast.parse(source)
    targets = [(name, node) for name, node in _documented(tree) if name in texts.docstrings]
    module = _doc_node(tree)
    if module is not None and texts.module is not None:
        targets.append(("", module))
    lines = source.splitlines(keepends=True)
    for name, node in sorted(targets, key=lambda t: t[1].lineno, reverse=True):
        text = texts.module if name == "" else texts.docstrings[name]
        assert text is not None and node.end_lineno is not None and node.end_col_offset is not None
        first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
        indent = " " * node.col_offset
        head, tail = first[:node.col_offset], last[node.end_col_offset:]
        lines[node.lineno - 1:node.end_lineno] = [head + _literal(text, indent) + tail]
    return "".join(lines)


def _literal(text: str, indent: str) -> str:
    """A triple-quoted literal of ``text`` at ``indent`` (cleandoc gives ``text`` back)."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    rest = "\n".join((indent + line) if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}\n{rest}\n{indent}"""'


# ------------------------------------------------------------------ checks

def examples(doc: str) -> list[str]:
    """A docstring's code examples: each ``>>>`` or ``...`` line and the output lines
    under it (up to a blank line), stripped; the same in every language."""
    out: list[str] = []
    in_example = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith((">>>", "... ")) or stripped == "...":
            in_example = True
            out.append(stripped)
        elif not stripped:
            in_example = False
        elif in_example:
            out.append(stripped)
    return out


def problems(english_source: str, english_hints: tuple[str, ...], texts: DrillTexts | None,
             where: str, properties: Iterable[str] = ()) -> list[str]:
    """What ``texts`` lacks, adds, or changes against the English (a sentence each)."""
    if texts is None:
        return [f"{where}: no translation"]
    found = []
    english = docstrings(english_source)
    theirs = dict(texts.docstrings)
    if texts.module is not None:
        theirs[""] = texts.module
    for name in sorted(set(english) - set(theirs)):
        found.append(f"{where}: the docstring of {name or 'the module'} is not translated")
    for name in sorted(set(theirs) - set(english)):
        found.append(f"{where}: {name or 'the module'} has a translated docstring but no English one")
    for name in sorted(set(english) & set(theirs)):
        if examples(english[name]) != examples(inspect.cleandoc(theirs[name])):
            found.append(f"{where}: the code examples of {name or 'the module'} differ from the English")
    if len(texts.hints) != len(english_hints):
        found.append(f"{where}: {len(texts.hints)} hints, the English has {len(english_hints)}")
    names = set(properties)
    for name in sorted(names - set(texts.properties)):
        found.append(f"{where}: property {name} has no title")
    for name in sorted(set(texts.properties) - names):
        found.append(f"{where}: [properties] names {name}, which the drill's tests do not define")
    return found


def property_names(test_source: str) -> list[str]:
    """The properties a drill's test file defines: its module-level ``test_*`` functions."""
    return [n.name for n in ast.parse(test_source).body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]


# ------------------------------------------------------------------ the course's titles

COURSE_TEXTS = "course.toml"  # locales/<lang>/course.toml: title = "...", [topics] name = "title"


def _course_texts(course: Path, lang: str) -> dict[str, Any]:
    """``locales/<lang>/course.toml`` of the course, or {} where there is none (English)."""
    return _read(course / LOCALES / lang / COURSE_TEXTS) or {}


def course_title(course: Course, lang: str) -> str:
    """The course's title in ``lang``; the English one where it has none."""
    title = _course_texts(course.root, lang).get("title")
    return title if isinstance(title, str) and title.strip() else course.title


def topic_title(course: Course, lang: str, topic: str) -> str:
    """The title of topic ``topic`` (its name) in ``lang``; the English one where it has none."""
    titles = _course_texts(course.root, lang).get("topics")
    title = titles.get(topic) if isinstance(titles, dict) else None
    if isinstance(title, str) and title.strip():
        return title
    return next((t.title for t in course.topics if t.name == topic), topic)


def hints(course: Course, lang: str, drill: Drill) -> tuple[str, ...]:
    """The drill's hints in ``lang``: the translated ones where the course has them
    all, else the English (so a hint's number means the same one in every language)."""
    texts = _texts(course.root, lang, drill.id)
    if texts is None or len(texts.hints) != len(drill.hints):
        return drill.hints
    return texts.hints


def _texts(course: Path, lang: str, drill_id: str) -> DrillTexts | None:
    """The drill's texts in ``lang`` for a report or a hint (None for English, and for
    a translation that cannot be read or is being written: then English, not broken)."""
    try:
        return load(course, lang, drill_id) if lang != "en" else None
    except CourseError:
        return None


def _title_of(texts: DrillTexts | None) -> str | None:
    """The drill's one-line title in the texts' language (its stub's module docstring's
    first line, code marks dropped), or None where they have none."""
    if texts is None or not texts.module:
        return None
    first = texts.module.strip().splitlines()[0].strip()
    return first.replace("``", "") or None


R = TypeVar("R", bound=Mapping[str, Any])


def with_titles(results: R, course: Path, lang: str) -> R:
    """``results`` with each exercise's title, and each property's (a test record's
    ``title``), in ``lang`` where the course has them (a copy: the results themselves
    are left as they are)."""
    if lang == "en":
        return results
    exercises = []
    for ex in results.get("exercises", []):
        texts = _texts(course, lang, str(ex.get("id")))
        found = _title_of(texts)
        titles = texts.properties if texts is not None else {}
        phrases = {"phrases": texts.phrases} if texts is not None and texts.phrases else {}
        tests = [{**t, **phrases, **({"title": titles[base]} if (base := t.get("name", "").partition("[")[0])
                                     in titles else {})} if isinstance(t, dict) else t
                 for t in ex.get("tests", [])]
        exercises.append({**ex, "tests": tests, **({"title": found} if found else {})})
    return cast(R, {**results, "exercises": exercises})


def property_titles(results: Mapping[str, Any]) -> dict[str, str]:
    """Test name -> its title, from results ``with_titles`` made (for the places that
    show a property by its name alone)."""
    return {t["name"]: t["title"] for ex in results.get("exercises", []) for t in ex.get("tests", [])
            if isinstance(t, dict) and t.get("title")}


# ------------------------------------------------------------------ the tests' own phrases

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_ITEMS = re.compile(r"((?:\[\d+\])+)$")  # what an item of a result adds to its phrase: [0][2]


def phrase_problems(english: str, translated: str) -> list[str]:
    """Why a ``[phrases]`` entry cannot be used (a sentence each)."""
    found = []
    if not _PLACEHOLDER.sub("", english).strip():
        found.append(f"{english!r} is only placeholders: it would match any text")
    if set(_PLACEHOLDER.findall(english)) != set(_PLACEHOLDER.findall(translated)):
        found.append(f"{english!r} and its translation have different placeholders")
    return found


@cache
def _usable(english: str, translated: str) -> bool:
    return not phrase_problems(english, translated)


@cache
def _pattern(template: str) -> re.Pattern[str]:
    """The template as a pattern: a placeholder matches any text, the same text
    wherever the same name comes again."""
    pattern, seen = [], set()
    for i, part in enumerate(_PLACEHOLDER.split(template)):
        if i % 2 == 0:
            pattern.append(re.escape(part))
        else:
            pattern.append(f"(?P={part})" if part in seen else f"(?P<{part}>.+?)")
            seen.add(part)
    return re.compile("".join(pattern), re.S)


def phrase(text: str, phrases: Mapping[str, str]) -> str | None:
    """``text`` (a failure phrase of the course's tests, as they wrote it in English) in
    the language of ``phrases`` (a drill's ``[phrases]``: templates whose ``{name}``
    parts match any text), or None where no template says it. An item's index
    (``result[0]``) is kept as it is."""
    items = _ITEMS.search(text)
    base = text[:items.start()] if items else text
    for english, translated in phrases.items():  # the first template that says it
        if not _usable(english, translated):
            continue
        found = _pattern(english).fullmatch(base)
        if found:
            return _filled(translated, found.groupdict()) + (items.group(1) if items else "")
    return None


def _filled(template: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
