"""The one-language detector: English prose in a Chinese view, Chinese in an English one.

A learner who reads Chinese sees Chinese everywhere, but code stays as the code writes it
(docs/DESIGN.md, rule 3). ``english_prose`` finds what breaks that in a text a learner
reads (``check``'s output, a report's text, Gradescope's output), once what is no prose
is taken out:

- the values a grading keeps (``values_of``: what the student's code printed, raised and
  returned, its traceback, the generated inputs, hypothesis' own report of a failing
  case, a kept message's parameters that are no words of the course's or the engine's,
  and what a course's phrase quotes in a ``QUOTED`` placeholder, torch's own error text
  among it), found wherever they sit in the text, however re-indented or wrapped;
- code: ```backticked``` spans, a command a learner types (``torchdrill stubs --lang
  zh_CN``), pytest's introspection of a failed ``assert`` (its ``assert ...``, ``+  where
  ...`` and ``At index 0 diff:`` lines), a terminal's colours;
- an English term glossed in full-width brackets right after its Chinese name, three
  words at most: 环形全归约（ring all-reduce）;
- words that are code: anything with a digit, ``_``, ``.``, ``/``, ``(``, ``=`` ... inside
  it (``torch.float32``, ``one_hot(labels``, ``x.clone()``, ``tensors/one_hot``), a
  command's option, a CamelCase or ALL-CAPS name (``ValueError``, ``GradScaler``,
  ``CUDA``), and the short, explicit ``ALLOWED`` list below.

What is left is prose when a run of English words that no punctuation breaks holds two of
three letters or more (``elements differ;``, ``tensor of shape``), or "of" or "the" (``fold
1 of n=10``, ``batch of 2``: numbers hide the words between them from the runs), or, on a
line with no Chinese at all, any one such word; and a line that opens with an English
word and a colon is a label (``call:``, ``result：``). The course's own names
(``course_names``: what its stubs define or quote as code, ``vjp``, ``padded``) may open a
line or stand alone. ``stray_chinese`` holds an English view to the same rule for Chinese
characters and full-width punctuation.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

# Identifiers that read like English words, and nothing else. A word is allowed here only
# where the code, not prose, writes it: dtype and Python names a message quotes (``bool``,
# ``None``), torch's and the course's names for things (``torch``, ``dtype``, ``cuda``),
# and the commands a learner types (``torchdrill``, ``tox``, ``pytest``). Everything with
# a digit, an underscore, a dot, a slash or brackets inside it is code already.
ALLOWED = frozenset({
    # Python and torch names
    "torch", "dtype", "dtypes", "bool", "int", "float", "complex", "None", "True", "False",
    "nan", "inf", "cpu", "cuda", "mps", "gloo", "softmax", "argmax", "einsum", "numpy",
    # the commands and tools a learner runs, and where
    "torchdrill", "tox", "pytest", "hypothesis", "pip", "git", "python", "Jupyter", "Colab", "Gradescope", "junit",
})

CJK = re.compile(r"[\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff"
                 r"\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_TOKEN = re.compile(CJK.pattern + r"+|[^\s" + CJK.pattern[1:-1] + r"]+")
_EDGES = "\"'`“”‘’()[]{}<>,.;:!?…*•→-–—|#"
_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
_CAMEL = re.compile(r"[A-Za-z][a-z0-9]*[A-Z]\w*|[A-Z]{2,}s?")  # ValueError, GradScaler, CUDA, GPUs
_BACKTICKS = re.compile(r"``.+?``|`[^`\n]+`")
# pytest's own report of a failed ``assert`` (after the course's sentence): the expression,
# its parts, and its explanation of a comparison
_INTROSPECTION = re.compile(r"^\s*(?:assert\s|\+\s+(?:where|and)\s|At index \d+ diff:|(?:Left|Right) contains |"
                            r"Full diff:|Use -v to get|Omitting \d+ identical items|Differing items:|"
                            r"Extra items in the (?:left|right)).*$", re.M)
_MASK = " \x00 "  # what stands for a value taken out: neither a word nor Chinese
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # a terminal's colours (the notebook's output has them)
# An English term glossed in brackets right after its Chinese name, as Chinese technical
# writing gives it: 环形全归约（ring all-reduce）. Three words at most: a sentence is no gloss.
_GLOSS = re.compile("(?<=" + CJK.pattern + r")（[A-Za-z][A-Za-z-]*(?: [A-Za-z][A-Za-z-]*){0,2}）")


@cache
def _pattern(value: str) -> re.Pattern[str] | None:
    """``value`` wherever it sits in a text as a whole (not ``int`` inside ``repeat_interleave``),
    its whitespace re-indented or wrapped."""
    parts = value.split()
    if not parts:
        return None
    body = r"\s+".join(re.escape(p) for p in parts)
    return re.compile((r"(?<!\w)" if value.strip()[0].isalnum() else "") + body
                      + (r"(?!\w)" if value.strip()[-1].isalnum() else ""))


def without(text: str, values: Iterable[str]) -> str:
    """``text`` with every value in ``values`` (longest first) and all code taken out."""
    for value in sorted(set(values), key=len, reverse=True):
        words = value.split()
        if not words or words[0] not in text or words[-1] not in text:  # cannot be there: not looked for
            continue
        if len(value) > 12 and " ".join(words) == value:  # one line as written: found as it is, at once
            text = text.replace(value, _MASK)
            continue
        pattern = _pattern(value)
        if pattern is not None:
            text = pattern.sub(_MASK, text)
    text = _BACKTICKS.sub(_MASK, _ANSI.sub("", text))
    text = _COMMAND.sub(_MASK, text)
    text = _GLOSS.sub(_MASK, text)
    return _INTROSPECTION.sub(_MASK, text)


_ALLOWED = frozenset(word.lower() for word in ALLOWED)
# A command a learner types, up to four words after the tool's name: ``torchdrill stubs --lang zh_CN``,
# ``pip install watchfiles``
_COMMAND = re.compile(r"\b(?:torchdrill|tox|pip|python|git)(?: +[-\w./=:@]+){1,4}")


def _is_word(token: str) -> bool:
    """Whether ``token`` is an English word (not code, a name, a number or Chinese)."""
    quoted = token.strip("\"'`“”‘’")
    if quoted.startswith("-") or (quoted.startswith("[") and quoted.rstrip(",.;:").endswith("]")):
        return False  # a command's option (``--lang``), a TOML table (``[grades]``)
    bare = token.strip(_EDGES)
    return bool(_WORD.fullmatch(bare)) and bare.lower() not in _ALLOWED and not _CAMEL.fullmatch(bare)


def _runs(line: str) -> Iterator[list[str]]:
    """The runs of English words in ``line``: what no code token, value, Chinese or
    punctuation breaks (``(padded, lengths)`` names two things, it says nothing)."""
    run: list[str] = []
    for token in _TOKEN.findall(line):
        if not _is_word(token):
            if run:
                yield run
            run = []
            continue
        if token[0] in "([{<" and run:
            yield run
            run = []
        run.append(token.strip(_EDGES))
        if token[-1] in ",;:)]}>!?":
            yield run
            run = []
    if run:
        yield run


# Words no code and no name is made of, which only English prose holds: "fold 1 of n=10",
# "batch of 2" (the numbers between them hide the words from the runs above).
_GLUE = frozenset({"of", "the"})
_LABEL = re.compile(r"^\s*(?:\d+\.\s*)?([A-Za-z]+)\s?[:：]")  # ``call:``, ``result：``, ``2. expected:``


@cache
def course_names(course: Path) -> frozenset[str]:
    """The names the course's stubs define (functions, classes, arguments) or quote as code
    in their docstrings (``padded``): ``vjp：`` at the head of a hint, ``padded：`` at the
    head of a failure, name a thing of the code; they are no English label."""
    names: set[str] = set()
    for path in (course / "exercises").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        names.update(re.findall(r"``([A-Za-z_]\w*)``", source))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(names)


def english_prose(text: str, values: Iterable[str] = (), names: Iterable[str] = ()) -> list[str]:
    """The English prose in ``text`` (a Chinese view), one finding per line and run
    (``names``: the course's own, which may head a line as a label)."""
    found, names = [], frozenset(names)
    for line in without(text, values).splitlines():
        label = _LABEL.match(line)
        if label and len(label.group(1)) >= 3 and _is_word(label.group(1)) and label.group(1) not in names:
            found.append(f"{label.group(1)!r} in {line.strip()[:160]!r}")
        alone = not CJK.search(line)
        for run in _runs(line):
            long = [w for w in run if len(w) >= 3]
            if len(long) >= 2 or (alone and set(long) - names) or _GLUE & {w.lower() for w in run}:
                found.append(f"{' '.join(run)!r} in {line.strip()[:160]!r}")
    return found


def stray_chinese(text: str, values: Iterable[str] = ()) -> list[str]:
    """The Chinese in ``text`` (an English view), one finding per line."""
    if not CJK.search(text):
        return []
    values = [value for value in values if CJK.search(value)]  # only those can hide Chinese
    return [f"{''.join(CJK.findall(line))!r} in {line.strip()[:160]!r}"
            for line in without(text, values).splitlines() if CJK.search(line)]


# ------------------------------------------------------------------ what a grading keeps as values

def _leaves(value: Any) -> Iterator[str]:
    """The texts of a described value (``grader.contract.describe``) a report shows as they
    are: strings, reprs (a module's, an optimizer's), a tensor's values."""
    if isinstance(value, str):
        yield value
        yield repr(value)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        if value.get("type") == "tensor":
            if isinstance(value.get("values"), str):
                yield value["values"]
            return
        if isinstance(value.get("repr"), str):
            yield value["repr"]
        if "type" not in value:  # a call's keyword arguments: name -> described value
            for v in value.values():
                yield from _leaves(v)
            return
        items = value.get("items")
        if isinstance(items, dict):
            for k, v in items.items():
                yield repr(k)
                yield from _leaves(v)
        elif isinstance(items, list):
            yield from _leaves(items)




# A course phrase's placeholders that hold what the code said, not the course's words:
# ``{call} raised ValueError({message})``, ``gradcheck ({case}): ...: {error}`` (torch's own text).
QUOTED = frozenset({"error", "exc", "message", "original", "got", "expected", "wrong"})


def _quoted(text: str, phrases: Mapping[str, str], depth: int = 0) -> Iterator[str]:
    """What the course's phrase that says ``text`` quotes (``QUOTED``), at any depth."""
    from grader.core import drill_texts

    if depth > drill_texts.MAX_DEPTH:
        return
    for template in drill_texts._most_said_first(tuple(phrases)):
        found = drill_texts._pattern(template).fullmatch(text)
        if found:
            for name, value in found.groupdict().items():
                if name in QUOTED:
                    yield value
                else:
                    yield from _quoted(value, phrases, depth + 1)
            return


def values_of(results: Mapping[str, Any], course: Path | None = None) -> set[str]:
    """Every text of ``results`` that is a value, not the grader's words: what the
    submission printed, raised (its exception's text, its traceback), returned and was
    given, hypothesis' report of the failing case, and what a kept message's parameters
    hold but the course's words and the engine's (``results_json.COURSE_PARAMS``,
    ``ENGINE_PARAMS``: those are translated), and, given the ``course``, what its
    phrases quote (``QUOTED``). Only texts with a word in them (the rest cannot look like
    prose)."""
    from grader.core import drill_texts
    from grader.core.results_json import COURSE_PARAMS, ENGINE_PARAMS
    from grader.reports.present import TRACEBACK_MARK

    found: set[str] = set()
    if course is not None:
        results = drill_texts.with_titles(results, course, "zh_CN")  # the phrases, whatever the view's language
    for ex in results.get("exercises", []):
        for flag in ex.get("static_flags") or []:
            found.add(str(flag.get("code", "")))
        for t in ex.get("tests", []):
            message = str(t.get("message") or "")
            if TRACEBACK_MARK in message:
                found.add(message.partition(TRACEBACK_MARK)[2])
            if not t.get("message_id"):  # a course's assert: its sentence, then what it quotes or pytest says
                found.add(message.partition("\n")[2])
            for stream in ("stdout", "stderr"):
                found.add(str(t.get(stream) or ""))
            params = (t.get("message_id") or {}).get("params") or {}  # those a report shows as written
            found.update(v for k, v in params.items() if isinstance(v, str) and k not in COURSE_PARAMS | ENGINE_PARAMS)
            phrases = t.get("phrases") or {}
            if phrases:
                said = [message.partition("\n")[0], *(v for k, v in params.items() if k in COURSE_PARAMS)]
                for text in said:
                    found.update(_quoted(str(text), phrases))
            cx = t.get("counterexample") or {}
            for key in ("example", "stdout", "stderr"):
                found.add(str(cx.get(key) or ""))
            for which in ("got", "expected"):
                found.update(_leaves(cx.get(which)))
            for call in cx.get("calls") or []:
                found.update(_leaves(call.get("args")))
                found.update(_leaves(call.get("kwargs")))
                found.update(_leaves(call.get("result")))
                if isinstance(call.get("raised"), str):  # "ValueError: its words", which a phrase may quote
                    found.update((call["raised"], call["raised"].partition(": ")[2]))
    found |= {v.strip().partition("\n")[0] for v in found if "\n" in v.strip()}  # a reason shows the first line
    return {v for v in found if re.search(r"[A-Za-z]{2}|" + CJK.pattern, v)}


# ------------------------------------------------------------------ a page's text

class _Text(HTMLParser):
    """The text a reader sees on a page, one line per text node (and per tooltip), without
    what the page marks as code: ``<code>``, a tensor's values, styles."""

    SKIPPED = ("style", "script", "code")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._skipping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag in self.SKIPPED or (tag == "pre" and "values" in classes):
            self._skipping.append(tag)
        for name, value in attrs:
            if name in ("title", "aria-label", "alt") and value and not self._skipping:
                self.lines.append(value)

    def handle_endtag(self, tag: str) -> None:
        if self._skipping and self._skipping[-1] == tag:
            self._skipping.pop()

    def handle_data(self, data: str) -> None:
        if not self._skipping and data.strip():
            self.lines.append(data)


def page_text(html: str) -> str:
    """What a reader of ``html`` reads, code left out (see ``_Text``)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return "\n".join(parser.lines)
