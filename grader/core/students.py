"""The rule for student ids: each becomes a folder name, a file name and a CSV cell.

Letters and digits of any script (``张三``, ``José``, ``alice``) with their combining
marks, and ``. _ - @ +``, starting with a letter or digit, in Unicode's composed form
(NFC: ``student_name`` gives it, as a Mac writes names decomposed), at most
``MAX_STUDENT_ID`` characters and ``MAX_STUDENT_ID_BYTES`` bytes of UTF-8 (file
systems count bytes). So no path separator, no hidden file, no command-line option, no
spreadsheet formula, no invisible or direction-changing character (Unicode's format
characters are neither letters nor digits), and none of the names Windows reserves
(``CON.json`` cannot be made there). Class grading refuses an entry whose name breaks
it; exports refuse to write a file for one.

Ids that look the same to a reader (``alice``, ``аlice`` with a Cyrillic а, ``ａｌｉｃｅ``
in full width, ``Alice``) are each valid; two of them in one class are the problem.
``lookalike_keys`` gives the forms under which ids are compared: UTS #39's skeleton
(Unicode's confusables table) after NFKC and case folding; ``Lookalikes`` finds the
ids that share one, reading each id once.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib import resources

from grader.core.i18n import _

MAX_STUDENT_ID = 100  # characters
MAX_STUDENT_ID_BYTES = 200  # of UTF-8: a file name may have 255, and reports add suffixes

_ID_PUNCTUATION = "._-@+"
_LETTERS_AND_DIGITS = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nd")
_MARKS = ("Mn", "Mc")  # combining marks: part of a letter in many scripts (Devanagari, Thai...)


def student_name(name: str) -> str:
    """The student id a file or folder name gives: the name in composed form (NFC)."""
    return unicodedata.normalize("NFC", name)


def _allowed(c: str) -> bool:
    return c in _ID_PUNCTUATION or unicodedata.category(c) in _LETTERS_AND_DIGITS + _MARKS


def student_id_problem(student: str) -> str | None:
    """Why ``student`` cannot name a report folder or a CSV cell, or None when it can:
    letters and digits of any script, their combining marks and ``._-@+``, starting
    with a letter or digit (no hidden file, no command-line option, no spreadsheet
    formula), in composed form, at most ``MAX_STUDENT_ID`` characters."""
    if not student:
        return "an empty student id"
    bad = sorted({c for c in student if not _allowed(c)})
    if bad:
        shown = ", ".join("space" if c == " " else repr(c) for c in bad)
        return (f"student id {student!r} has characters a student id may not have ({shown}); "
                f"allowed: letters and digits of any script, and {' '.join(_ID_PUNCTUATION)}")
    if unicodedata.category(student[0]) not in _LETTERS_AND_DIGITS:
        return (f"student id {student!r} must start with a letter or digit (a leading "
                f"{student[0]!r} makes a hidden file, a command-line option or a spreadsheet formula)")
    if all(ord(c) in _DEFAULT_IGNORABLE for c in student):
        return _("student id {student} shows nothing: it is made of invisible characters only",
                 student=ascii(student))
    if student_name(student) != student:
        return f"student id {student!r} is not in Unicode's composed form (NFC)"
    if len(student) > MAX_STUDENT_ID or len(student.encode("utf-8")) > MAX_STUDENT_ID_BYTES:
        return (f"student id {student[:20]!r}... is {len(student)} characters long (at most "
                f"{MAX_STUDENT_ID}, and {MAX_STUDENT_ID_BYTES} bytes of UTF-8)")
    if _WINDOWS_RESERVED.fullmatch(student):
        return f"student id {student!r} is a file name Windows reserves (CON, NUL, COM1...)"
    return None


_WINDOWS_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)


# ------------------------------------------------------------------ look-alike ids

def lookalike_keys(student: str) -> frozenset[str]:
    """The forms under which ``student`` is compared with other ids; two ids that share
    one look alike. The skeleton (``skeleton``) of the id after NFKC (``ａｌｉｃｅ`` is
    ``alice``) and case folding, and the case-folded skeleton of its NFKC form (UTS #39
    maps a capital I to l, as in ``Ian`` and ``lan``, which folding I to i first hides)."""
    nfkc = unicodedata.normalize("NFKC", student)
    return frozenset({skeleton(nfkc.casefold()), skeleton(skeleton(nfkc).casefold())})


def skeleton(text: str) -> str:
    """UTS #39's skeleton: ``text`` in NFD with every character replaced by its prototype
    in Unicode's confusables table (Cyrillic ``а`` by ``a``, ``1`` by ``l``, ``0`` by
    ``O``, ``m`` by ``rn``), then in NFD again. Default-ignorable characters, which show
    nothing, are dropped first, as UTS #39 does since Unicode 15.1."""
    table = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in decomposed
                                                if ord(c) not in _DEFAULT_IGNORABLE))


class Lookalikes:
    """Student ids by their ``lookalike_keys``, each id's computed once: which ids look
    like which. Linear in the number of ids."""

    def __init__(self, students: Iterable[str] = ()) -> None:
        self._keys: dict[str, frozenset[str]] = {}
        self._ids: dict[str, set[str]] = {}  # a key -> the ids that have it
        self.add(students)

    def add(self, students: Iterable[str]) -> None:
        """Take ``students`` into the index (an id already in it is not read again)."""
        for student in students:
            if student not in self._keys:
                self._keys[student] = keys = lookalike_keys(student)
                for key in keys:
                    self._ids.setdefault(key, set()).add(student)

    def like(self, student: str) -> list[str]:
        """The ids of the index, other than ``student``, that look like it, sorted
        (``student`` need not be in the index)."""
        keys = self._keys.get(student)
        if keys is None:
            keys = lookalike_keys(student)
        return sorted({other for key in keys for other in self._ids.get(key, ()) if other != student})

    def groups(self) -> list[list[str]]:
        """The ids that look alike, directly or through others (``ALICE`` like ``alice``
        by case, like ``allce`` by its I), in groups of two or more, each sorted."""
        parent = {student: student for student in self._keys}

        def root(student: str) -> str:
            while parent[student] != student:
                parent[student] = parent[parent[student]]
                student = parent[student]
            return student

        for ids in self._ids.values():
            first, *rest = ids
            for other in rest:
                parent[root(other)] = root(first)
        found: dict[str, list[str]] = {}
        for student in self._keys:
            found.setdefault(root(student), []).append(student)
        return sorted(sorted(group) for group in found.values() if len(group) > 1)


def shown_id(student: str) -> str:
    """A student id as a message shows it: beyond ASCII, with its escapes beside it, so
    that ids which look alike read differently (``аlice (\\u0430lice)``)."""
    return student if student.isascii() else f"{student} ({ascii(student)[1:-1]})"


# Unicode's Default_Ignorable_Code_Point characters that the id rule would let in (the
# rest are format characters, refused): the combining grapheme joiner, the Hangul fillers,
# Khmer's inherent vowels, Mongolian's free variation selectors and the variation
# selectors. Python's unicodedata does not have the property; DerivedCoreProperties.txt
# (Unicode 15.1) lists these.
_DEFAULT_IGNORABLE = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F,
                                0x3164, 0xFFA0, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
_LEFT_TO_RIGHT_MARK = "\u200e"


@cache
def _prototypes() -> dict[str, str]:
    """Character -> its prototype, from Unicode's confusables table (``confusables.txt``,
    UTS #39) as the ``confusable_homoglyphs`` package ships it; read once per process.

    That copy lists each line of the table both ways (a with b, b with a) without saying
    which way it went, and wraps right-to-left characters in left-to-right marks. The
    table maps one character to a prototype that maps nowhere further, so its lines form
    stars, a prototype joined to each character it stands for. Hence: a character joined
    to several others is a prototype; one joined only to a string of several characters,
    or to a prototype, maps to it; two characters joined only to each other are one
    class, and the smaller stands for both; a prototype string's own characters (in
    NFD: the copy writes some composed) go through the same choice. Checked against
    Unicode's own confusables.txt of the same data (13.0): the same classes of look-alike
    characters but 12 of 3,661, where 18 characters an id may have (``ɲ`` and ``ņ``,
    Arabic letters with hamza or madda) land in a class of their own."""
    text = (resources.files("confusable_homoglyphs") / "confusables.json").read_text(encoding="utf-8")
    joined: dict[str, set[str]] = {}
    for glyph, others in json.loads(text).items():
        glyph = glyph.replace(_LEFT_TO_RIGHT_MARK, "")
        for other in others:
            alike = other["c"].replace(_LEFT_TO_RIGHT_MARK, "")
            if glyph and alike and glyph != alike:
                joined.setdefault(glyph, set()).add(alike)
                joined.setdefault(alike, set()).add(glyph)
    single: dict[str, str] = {}
    for char, others in joined.items():
        if len(char) != 1 or len(others) != 1:
            continue
        (other,) = others
        if len(other) > 1 or len(joined[other]) > 1 or other < char:
            single[char] = other
    return {char: "".join(single.get(c, c) for c in unicodedata.normalize("NFD", prototype))
            for char, prototype in single.items()}
