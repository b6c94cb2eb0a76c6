"""Every Chinese text of the course says one thing one way and punctuates as Chinese
does: the engine's message catalogs (their msgstr), the drill texts (``locales/zh_CN/``),
the learner's docs (``docs/zh_CN/``) and the Chinese templates a release writes.

- No word that ``locales/glossary.toml`` lists under ``[variants.zh_CN]`` (部分完成 where
  the course says 部分通过), named by file and line.
- Each catalog message uses the glossary's term where its English uses the term, as
  ``test_translations`` checks each drill's docstrings and hints.
- No ASCII ``, ; : ( ) ! ?`` next to a Chinese character: a Chinese sentence takes
  ，；：（）！？. Code, placeholders, link targets and markup are not sentences
  (``NOT_PROSE``)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from grader.tests.grading import REPO
from grader.tests.test_translations import GLOSSARY, missing_terms

LANG = "zh_CN"
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CATALOGS = sorted((REPO / "grader" / "locale" / LANG / "LC_MESSAGES").glob("*.po"))
DRILL_TEXTS = sorted((REPO / "locales" / LANG).rglob("*.toml"))
DOCS = sorted((REPO / "docs" / LANG).glob("*.md")) + sorted((REPO / "grader").glob(f"**/templates/*.{LANG}.*"))

# What is not a Chinese sentence, so ASCII punctuation may touch Chinese there. Each is
# blanked out (same length, line breaks kept) before the punctuation is looked at.
NOT_PROSE: tuple[tuple[str, str], ...] = (
    (r"``.+?``", "reST code"),
    (r"`[^`\n]+`", "markdown code"),
    (r"\{[^{}\n]*\}", "a format placeholder"),
    (r"%\(\w+\)[sdr]|%%", "a jinja2 placeholder"),
    (r"\]\([^)\n]*\)", "a markdown link's target"),
    (r"</?[A-Za-z][^>\n]*>|&\w+;", "HTML markup"),
    (r"::(?=\n|$)", "reST's literal-block marker"),
)
PUNCTUATION = re.compile(rf"(?<=[{CJK}])[,;:()!?]|[,;:()!?](?=[{CJK}])")
FULL_WIDTH = {",": "，", ";": "；", ":": "：", "(": "（", ")": "）", "!": "！", "?": "？"}
# English identifiers a message names as words (the commands check, watch and hint).
NOT_TERMS = ("check, watch and hint",)
# What is code in a catalog's English, so not a term: placeholders, paths, commands,
# options, METAVARS, calls, code spans and HTML.
CATALOG_CODE = re.compile(r"\{[^{}]*\}|%\(\w+\)s|\S*[/.]\S*\w|torchdrill \w[\w-]*|--?[\w-]+|\b[A-Z][A-Z_]+\b"
                          r"|\w+\(\S*\)|`[^`]*`|<[^>]*>")


@dataclass(frozen=True)
class Text:
    """One Chinese text as its file holds it: the lines it spans, joined."""

    path: str  # from the course's root
    body: str
    starts: tuple[int, ...]  # the offset in ``body`` at which each of its lines begins
    first_line: int

    def line(self, offset: int) -> int:
        return self.first_line + bisect.bisect_right(self.starts, offset) - 1


def _text(path: str, lines: list[tuple[int, str]], sep: str) -> Text:
    starts, at = [], 0
    for _, part in lines:
        starts.append(at)
        at += len(part) + len(sep)
    return Text(path, sep.join(part for _, part in lines), tuple(starts), lines[0][0] if lines else 1)


def _unquote(line: str) -> str:
    inner = line[line.index('"') + 1:line.rindex('"')]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), inner)


def _where(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else path.name


def catalog_texts(path: Path) -> Iterator[Text]:
    """Each msgstr of a .po file (its continuation lines joined as gettext joins them)."""
    rel = _where(path)
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("msgstr"):
            if lines:
                yield _text(rel, lines, "")
            lines = [(number, _unquote(line))]
        elif line.startswith('"') and lines:
            lines.append((number, _unquote(line)))
        elif lines:
            yield _text(rel, lines, "")
            lines = []
    if lines:
        yield _text(rel, lines, "")


def file_text(path: Path) -> Text:
    """A drill text or a doc, whole; a markdown file's code blocks blanked out (a
    ```{note} block is prose)."""
    lines: list[tuple[int, str]] = []
    block = None  # the open fence: "code", or "prose" for a directive such as ```{note}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = ".md" in path.suffixes and line.lstrip().startswith("```")
        if fence:
            block = None if block else "prose" if line.lstrip()[3:].startswith("{") else "code"
        lines.append((number, "" if fence or block == "code" else line))
    return _text(_where(path), lines, "\n")


def all_texts() -> Iterator[Text]:
    for path in CATALOGS:
        yield from catalog_texts(path)
    for path in [*DRILL_TEXTS, *DOCS]:
        yield file_text(path)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match[0])


def prose(body: str) -> str:
    """``body`` with what is not a sentence blanked out, offsets kept."""
    for pattern, _ in NOT_PROSE:
        body = re.sub(pattern, _blank, body, flags=re.S)
    return body


def punctuation_problems(text: Text) -> list[str]:
    return [f"{text.path}:{text.line(m.start())}: ASCII {m[0]!r} in a Chinese sentence: write {FULL_WIDTH[m[0]]}"
            for m in PUNCTUATION.finditer(prose(text.body))]


@dataclass(frozen=True)
class Variant:
    word: str
    use: str
    why: str
    except_: tuple[str, ...] = ()  # path globs where the word means something else
    allow: tuple[str, ...] = ()  # phrases in which it may stand

    @classmethod
    def read(cls, word: str, entry: Mapping[str, object]) -> Variant:
        def strings(key: str) -> tuple[str, ...]:
            value = entry.get(key, [])
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), (word, key)
            return tuple(value)

        use, why = entry.get("use"), entry.get("why")
        assert isinstance(use, str) and isinstance(why, str) and why, f"{word}: needs use and why"
        assert set(entry) <= {"use", "why", "except", "allow"}, f"{word}: unknown keys {set(entry)}"
        return cls(word, use, why, strings("except"), strings("allow"))

    def pattern(self) -> re.Pattern[str]:
        """The word, also where a line break (and the next line's indent) splits it."""
        return re.compile(r"(?:\n[ \t]*)?".join(map(re.escape, self.word)))


VARIANTS = [Variant.read(word, entry) for word, entry in GLOSSARY.get("variants", {}).get(LANG, {}).items()]


def variant_problems(text: Text, variants: list[Variant]) -> list[str]:
    body = prose(text.body)
    problems = []
    for variant in variants:
        if any(fnmatch(text.path, glob) for glob in variant.except_):
            continue
        allowed = [range(m.start(), m.end()) for phrase in variant.allow for m in re.finditer(re.escape(phrase), body)]
        for m in variant.pattern().finditer(body):
            if not any(m.start() in span for span in allowed):
                problems.append(f"{text.path}:{text.line(m.start())}: {variant.word}: write {variant.use} ({variant.why})")
    return problems


def test_the_checks_can_fail(tmp_path):
    """Each check on a made-up text: what it finds, where, and what it lets be."""
    (tmp_path / "x.po").write_text('msgid "a"\nmsgstr ""\n"每个性质最多 25 个样例, "\n"见 ``f(a, b)``：{n} 个"\n\n'
                                   'msgid "b"\nmsgstr "好!"\n', encoding="utf-8")
    po = list(catalog_texts(tmp_path / "x.po"))
    assert [(t.first_line, t.body) for t in po] == [(2, "每个性质最多 25 个样例, 见 ``f(a, b)``：{n} 个"), (7, "好!")]
    assert punctuation_problems(po[0]) == ["x.po:3: ASCII ',' in a Chinese sentence: write ，"]
    assert punctuation_problems(po[1]) == ["x.po:7: ASCII '!' in a Chinese sentence: write ！"]
    doc = _text("d.md", [(1, "共有 3 个提示（见[笔记本](#笔记本)）"), (2, "部分"), (3, "  完成了::")], "\n")
    assert punctuation_problems(doc) == []
    (tmp_path / "d.md").write_text("```{note}\n部分完成\n```\n\n```python\nf(样例)\n```\n样例\n", encoding="utf-8")
    assert file_text(tmp_path / "d.md").body == "\n部分完成\n\n\n\n\n\n样例"
    variants = [Variant("个提示", "条提示", "counted with 条"), Variant("部分完成", "部分通过", "status"),
                Variant("样例", "示例", "one word", except_=("x.*",))]
    assert variant_problems(doc, variants) == ["d.md:1: 个提示: write 条提示 (counted with 条)",
                                               "d.md:2: 部分完成: write 部分通过 (status)"]
    assert variant_problems(po[0], variants) == []
    assert variant_problems(doc, [Variant("个提示", "条提示", "", allow=("3 个提示",))]) == []


def test_no_term_or_advice_holds_a_variant():
    """A variant inside a glossary term, or inside the word it says to use instead,
    would fail every text that follows the glossary."""
    assert VARIANTS, "locales/glossary.toml has no [variants.zh_CN]"
    for variant in VARIANTS:
        assert [t for t in GLOSSARY[LANG].values() if variant.word in t] == [], variant.word
        assert variant.word not in variant.use, variant.word


@pytest.mark.parametrize("path", [*CATALOGS, *DRILL_TEXTS, *DOCS], ids=lambda p: str(p.relative_to(REPO)))
def test_no_variant_of_a_glossary_term(path):
    texts = list(catalog_texts(path)) if path.suffix == ".po" else [file_text(path)]
    assert [p for text in texts for p in variant_problems(text, VARIANTS)] == []


@pytest.mark.parametrize("path", [*CATALOGS, *DRILL_TEXTS, *DOCS], ids=lambda p: str(p.relative_to(REPO)))
def test_chinese_sentences_take_full_width_punctuation(path):
    texts = list(catalog_texts(path)) if path.suffix == ".po" else [file_text(path)]
    assert [p for text in texts for p in punctuation_problems(text)] == []


def catalog_missing_terms(english: str, translated: str, terms: Mapping[str, str]) -> list[str]:
    for words in NOT_TERMS:
        english = english.replace(words, " ")
    return missing_terms(CATALOG_CODE.sub(" ", english), translated, dict(terms))


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.name)
def test_each_message_follows_the_glossary(path):
    """A message whose English uses a glossary term says it the glossary's way
    (code, placeholders and paths in the English are not terms)."""
    problems = []
    with path.open("rb") as f:
        for message in read_po(f):
            if not message.id or not message.string:
                continue
            english = message.id if isinstance(message.id, str) else message.id[-1]
            chinese = message.string if isinstance(message.string, str) else " ".join(message.string)
            missing = catalog_missing_terms(english, chinese, GLOSSARY[LANG])
            if missing:
                problems.append(f"{path.name}:{message.lineno}: {english[:60]!r}: {', '.join(missing)}")
    assert problems == []


def test_the_catalog_check_can_fail():
    terms = {"stub": "存根", "hint": "提示"}
    assert catalog_missing_terms("still a stub", "仍是桩代码", terms) == ["stub = 存根"]
    assert catalog_missing_terms("{stub} in tensors/stub.py, --stub", "", terms) == []
    assert catalog_missing_terms("check, watch and hint work here", "check、watch 和 hint 在这里使用", terms) == []
