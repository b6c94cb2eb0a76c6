"""The rule for student ids: each becomes a folder name, a file name and a CSV cell.

ASCII letters, digits and ``. _ - @ +``, starting with a letter or digit, at most
``MAX_STUDENT_ID`` characters: so no path separator, no hidden file, no
command-line option, no spreadsheet formula, and none of the names Windows
reserves (``CON.json`` cannot be made there). Class grading refuses an entry whose
name breaks it; exports refuse to write a file for one.
"""

from __future__ import annotations

import re

MAX_STUDENT_ID = 100  # characters

_ID_PUNCTUATION = "._-@+"
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" + _ID_PUNCTUATION)


def student_id_problem(student: str) -> str | None:
    """Why ``student`` cannot name a report folder or a CSV cell, or None when it can:
    ASCII letters, digits and ``._-@+``, starting with a letter or digit (no hidden
    file, no command-line option, no spreadsheet formula), at most ``MAX_STUDENT_ID``."""
    if not student:
        return "an empty student id"
    bad = sorted({c for c in student if c not in _ID_CHARS})
    if bad:
        shown = ", ".join("space" if c == " " else repr(c) for c in bad)
        return (f"student id {student!r} has characters a student id may not have ({shown}); "
                f"allowed: ASCII letters, digits and {' '.join(_ID_PUNCTUATION)}")
    if not student[0].isalnum():
        return (f"student id {student!r} must start with a letter or digit (a leading "
                f"{student[0]!r} makes a hidden file, a command-line option or a spreadsheet formula)")
    if len(student) > MAX_STUDENT_ID:
        return f"student id {student[:20]!r}... is {len(student)} characters long (at most {MAX_STUDENT_ID})"
    if _WINDOWS_RESERVED.fullmatch(student):
        return f"student id {student!r} is a file name Windows reserves (CON, NUL, COM1...)"
    return None


_WINDOWS_RESERVED = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)
