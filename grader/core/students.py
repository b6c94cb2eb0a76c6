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
"""

from __future__ import annotations

import re
import unicodedata

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
    if student_name(student) != student:
        return f"student id {student!r} is not in Unicode's composed form (NFC)"
    if len(student) > MAX_STUDENT_ID or len(student.encode("utf-8")) > MAX_STUDENT_ID_BYTES:
        return (f"student id {student[:20]!r}... is {len(student)} characters long (at most "
                f"{MAX_STUDENT_ID}, and {MAX_STUDENT_ID_BYTES} bytes of UTF-8)")
    if _WINDOWS_RESERVED.fullmatch(student):
        return f"student id {student!r} is a file name Windows reserves (CON, NUL, COM1...)"
    return None


_WINDOWS_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)
