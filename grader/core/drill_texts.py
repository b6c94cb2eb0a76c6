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
import itertools
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

from grader.core import engine_phrases
from grader.core.syllabus import Course, CourseError, Drill, joined, summary

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
    targets = [(node, texts.docstrings[name]) for name, node in _documented(tree) if name in texts.docstrings]
    module = _doc_node(tree)
    if module is not None and texts.module is not None:
        targets.append((module, texts.module))
    return swap_docstrings(source, targets)


def docstring_nodes(tree: ast.Module) -> list[tuple[str, ast.Constant]]:
    """(qualified name, docstring node) of the module ("") and of every function and
    class at any depth but a function's inside, in the order they come."""
    found = _documented(tree)
    module = _doc_node(tree)
    return sorted(([("", module)] if module is not None else []) + found,
                  key=lambda t: (t[1].lineno, t[1].col_offset))


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line as Python counts them (not str.splitlines')


def swap_docstrings(source: str, edits: Iterable[tuple[ast.Constant, str]]) -> str:
    """``source`` with each docstring node of ``edits`` (nodes of ``ast.parse(source)``)
    replaced by a literal of its text; every other byte as written, line ends included."""
    lines = _LINE.findall(source)
    found = re.search(r"\r\n|\r|\n", source)
    newline = found.group() if found else "\n"
    for node, text in sorted(edits, key=lambda t: t[0].lineno, reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
        head, tail = first[:_column(first, node.col_offset)], last[_column(last, node.end_col_offset):]
        indent = head if not head.strip() else " " * len(head)
        lines[node.lineno - 1:node.end_lineno] = [head + _literal(text, indent, newline) + tail]
    return "".join(lines)


def _column(line: str, offset: int) -> int:
    """The character index of ``ast``'s column ``offset`` (a count of UTF-8 bytes)."""
    return len(line.encode("utf-8")[:offset].decode("utf-8", errors="ignore"))


def _literal(text: str, indent: str, newline: str = "\n") -> str:
    """A triple-quoted literal of ``text`` at ``indent`` (cleandoc gives ``text`` back),
    its lines ended by ``newline`` (the file's own)."""
    def escaped(part: str) -> str:
        return part.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').replace("\r", "\\r")

    lines = escaped(text).split("\n")
    if len(lines) == 1:  # quotes that end the text would end the literal early: escaped
        core = text.rstrip('"')
        return '"""' + escaped(core) + '\\"' * (len(text) - len(core)) + '"""'
    rest = newline.join((indent + line) if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}{newline}{rest}{newline}{indent}"""'


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


def title(course: Path, lang: str, drill_id: str) -> str | None:
    """The drill's one-line title in ``lang`` (its module docstring's first sentence),
    or None where the course has none in that language (English included)."""
    return _title_of(_texts(course, lang, drill_id))


def _title_of(texts: DrillTexts | None) -> str | None:
    """The drill's one-line title in the texts' language (its stub's module docstring's
    first sentence, code marks dropped), or None where they have none."""
    if texts is None or not texts.module:
        return None
    return summary(texts.module).replace("``", "") or None


R = TypeVar("R", bound=Mapping[str, Any])


def with_titles(results: R, course: Path, lang: str) -> R:
    """``results`` with each exercise's title, and each property's (a test record's
    ``title``), in ``lang`` where the course has them (a copy: the results themselves
    are left as they are)."""
    if lang == "en":
        return results
    shared = course_phrases(course, lang)
    exercises = []
    for ex in results.get("exercises", []):
        texts = _texts(course, lang, str(ex.get("id")))
        found = _title_of(texts)
        titles = texts.properties if texts is not None else {}
        said = dict(texts.phrases if texts is not None else {})  # the drill's own first, then the course's
        said.update((k, v) for k, v in shared.items() if k not in said)
        phrases = {"phrases": said} if said else {}
        tests = [{**t, **phrases, **({"title": titles[base]} if (base := t.get("name", "").partition("[")[0])
                                     in titles else {})} if isinstance(t, dict) else t
                 for t in ex.get("tests", [])]
        exercises.append({**ex, "tests": tests, **({"title": found} if found else {})})
    return cast(R, {**results, "exercises": exercises})


def course_phrases(course: Path, lang: str) -> dict[str, str]:
    """The failure phrases every drill's tests may say (``tests/properties.py``'s), in
    ``lang``: the ``[phrases]`` of ``locales/<lang>/course.toml`` ({} where there are none,
    or they cannot be read)."""
    try:
        found = _course_texts(course, lang).get("phrases")
    except CourseError:
        return {}
    return {k: v for k, v in found.items() if isinstance(v, str) and v.strip()} if isinstance(found, dict) else {}


def property_titles(results: Mapping[str, Any]) -> dict[str, str]:
    """Test name -> its title, from results ``with_titles`` made (for the places that
    show a property by its name alone)."""
    return {t["name"]: t["title"] for ex in results.get("exercises", []) for t in ex.get("tests", [])
            if isinstance(t, dict) and t.get("title")}


# ------------------------------------------------------------------ the tests' own phrases

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
LIST_SEPARATOR = engine_phrases.LIST_SEPARATOR  # between the parts of a list: "changed x; changed y"
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


MAX_DEPTH = 4  # phrases inside phrases: "one_hot of ... ({why})" with a phrase of its own as ``why``
_OPEN, _CLOSE = "([{", ")]}"


def _balanced(value: str) -> bool:
    """Whether ``value``'s brackets pair up: a piece an f-string put there (a shape, a call,
    a description), not the tail of one and the head of the next."""
    stack: list[str] = []
    for ch in value:
        if ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
        elif ch in _CLOSE and (not stack or stack.pop() != ch):
            return False
    return not stack


MAX_SPLITS = 64  # the ways to cut one text by one template that are weighed (adjacent placeholders)
MAX_STEPS = 500  # the cuts tried for one text and one template, whether they fit or not
MAX_TEXT = 1_500  # characters of a text a phrase may say: a longer one holds more than the course's words


def _splits(template: str, text: str) -> Iterator[dict[str, str]]:
    """Each way ``template`` cuts ``text`` into its placeholders' values, shortest values
    first, in which every value is a whole piece (``_balanced``): ``(2, 2)) (torch.gather
    gives the expected`` is no shape. Two placeholders side by side (``{got}{got_shape}``)
    may cut one text in several ways: ``_said`` weighs them all."""
    parts = _PLACEHOLDER.split(template)
    if not _in_order(parts, text):
        return
    steps = [MAX_STEPS]  # a text of a student's words cut many ways must not take long

    def fill(i: int, at: int, found: dict[str, str]) -> Iterator[dict[str, str]]:
        steps[0] -= 1
        if steps[0] < 0:
            return
        if i >= len(parts):
            if at == len(text):
                yield found
            return
        name, literal = parts[i], parts[i + 1]
        if i + 2 >= len(parts):
            ends = [len(text) - len(literal)]
        elif literal:
            ends = [j for j in range(at + 1, len(text)) if text.startswith(literal, j)]
        else:
            ends = list(range(at + 1, len(text) + 1))
        for end in ends:
            value = text[at:end]
            if end > at and (name not in found or found[name] == value) and _balanced(value) \
                    and text.startswith(literal, end):
                yield from fill(i + 2, end + len(literal), {**found, name: value})

    if text.startswith(parts[0]):
        yield from fill(1, len(parts[0]), {})


def _in_order(parts: list[str], text: str) -> bool:
    """Whether ``text`` starts and ends with the template's first and last words and holds
    the others in order between them: what any cut needs, found without backtracking."""
    first, last = parts[0], parts[-1]
    if len(parts) == 1:
        return text == first
    if not text.startswith(first) or not text.endswith(last) or len(text) < len(first) + len(last) + 1:
        return False
    at, end = len(first) + 1, len(text) - len(last)
    for literal in parts[2:-1:2]:
        found = text.find(literal, at, end)
        if found < 0:
            return False
        at = found + len(literal) + 1
    return at <= end + 1


def _split(template: str, text: str) -> dict[str, str] | None:
    """The first of ``_splits``, or None."""
    return next(_splits(template, text), None)


def phrase(text: str, phrases: Mapping[str, str], inner: Mapping[str, str] | None = None) -> str | None:
    """``text`` (a failure phrase of the course's tests, as they wrote it in English) in
    the language of ``phrases`` (a drill's ``[phrases]``: templates whose ``{name}``
    parts match any text), or None where no template says it. An item's index
    (``result[0]``) is kept as it is. What fills a placeholder is translated the same
    way where a template of ``inner`` (default: ``phrases``) says it (a case's
    description inside a sentence; a list of such parts joined by "; " part by part),
    else kept as written (a value, a name). Where several templates say ``text``, the
    one that leaves the fewest words as written wins (``_said``): a sentence's template,
    not the template of the description at its head whose last placeholder would
    swallow the rest of the sentence."""
    said = _said(text, phrases, phrases if inner is None else inner, 0)
    return said[0] if said is not None else None


def _said(text: str, phrases: Mapping[str, str], inner: Mapping[str, str],
          depth: int) -> tuple[str, int] | None:
    """(``text`` in the phrases' language, the letters left as written), by the template
    of ``phrases`` that leaves the fewest (the one with the most words of its own among
    equals), or None where none says it. Remembered: a report says the same phrases
    for many properties and students."""
    if len(text) > MAX_TEXT:
        return None
    key = (text, tuple(phrases.items()), None if inner is phrases else tuple(inner.items()), depth)
    if key not in _SAID:
        if len(_SAID) > MAX_SAID:
            _SAID.clear()
        _SAID[key] = _said_now(text, phrases, inner, depth)
    return _SAID[key]


MAX_SAID = 20_000
_SAID: dict[tuple[Any, ...], tuple[str, int] | None] = {}


def _said_now(text: str, phrases: Mapping[str, str], inner: Mapping[str, str],
              depth: int) -> tuple[str, int] | None:
    bases: list[tuple[str, str]] = [(text, "")]
    items = _ITEMS.search(text)
    if items is not None:
        indices = items.group(1)
        bases += [(text[:items.start() + cut.start()], indices[cut.start():])
                  for cut in reversed(list(re.finditer(r"\[\d+\]", indices)))]
    best: tuple[str, int] | None = None
    for english in _most_said_first(tuple(phrases)):
        translated = phrases[english]
        if not _usable(english, translated):
            continue
        for base, suffix in bases:  # the whole text, else without its last items' indices ("[8]" ends like "[0]")
            matched = False
            for found in itertools.islice(_splits(english, base), MAX_SPLITS):
                matched = True
                parts = {name: _part(value, inner, depth) for name, value in found.items()}
                left = sum(n for _, n in parts.values())
                if best is None or left < best[1]:
                    best = (_filled(translated, {k: v for k, (v, _) in parts.items()}) + suffix, left)
            if matched:
                break
        if best is not None and best[1] == 0:
            break
    return best


@cache
def _most_said_first(templates: tuple[str, ...]) -> tuple[str, ...]:
    """The templates, those with the most words of their own first, then those cut in more
    parts, in the given order among equals: the order in which ``_said`` tries them, and
    keeps the first of those that leave as few words as written."""
    return tuple(sorted(templates, key=lambda template: (-len(_PLACEHOLDER.sub("", template)),
                                                         -len(_PLACEHOLDER.findall(template)))))


_LETTER = re.compile("[A-Za-z]")


def _part(value: str, phrases: Mapping[str, str], depth: int) -> tuple[str, int]:
    """A placeholder's text in the phrases' language where they say it, else as written;
    and how many of its letters are left as written."""
    if depth >= MAX_DEPTH:
        return value, len(_LETTER.findall(value))
    whole = _said(value, phrases, phrases, depth + 1) or (value, len(_LETTER.findall(value)))
    pieces = value.split(LIST_SEPARATOR)
    if len(pieces) > 1:  # a list ("changed x; changed y"), when a template says each part
        said = [_said(piece, phrases, phrases, depth + 1) for piece in pieces]
        if all(part is not None for part in said):
            listed = cast(list[tuple[str, int]], said)
            left = sum(n for _, n in listed)
            if left < whole[1]:
                return phrases.get(LIST_SEPARATOR, LIST_SEPARATOR).join(p for p, _ in listed), left
    return whole


def _filled(template: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
