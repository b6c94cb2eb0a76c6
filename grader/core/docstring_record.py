"""The course's English docstrings, kept beside a learner's work.

``torchdrill stubs`` (``grader.learner.stub_language``) switches the docstrings of the
drill files in ``exercises/`` between languages in place. The translations live in
``locales/<lang>/``; the English lives only in the stubs themselves, so before a file
first leaves English its docstrings are kept in ``<folder>/.torchdrill-docstrings.json``
(beside the hints, ``grader.core.hints``): drill id -> qualified name ("" the module) ->
docstring, and with them the translations last written into each file, which stay the
course's texts after the course improves its translations. A release writes the course's own into the handout, so a handout in any
language can switch to English and tell an edited English docstring from the course's.
A hidden file: never graded, never a source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from grader.core import drill_texts, sources
from grader.core.errors import UsageError
from grader.core.files import write_atomically
from grader.core.i18n import _
from grader.core.stubs import handout_source

ENGLISH_FILE = ".torchdrill-docstrings.json"
SCHEMA = 1
MAX_RECORD_BYTES = 4 * 2**20

Texts = dict[str, str]  # qualified name ("" the module) -> docstring


def path_in(folder: Path) -> Path:
    return folder / ENGLISH_FILE


Record = dict[str, dict[str, Texts]]  # language -> drill id -> texts


def read_all(folder: Path) -> Record:
    """What ``folder`` keeps: ``"en"``, drill id -> the course's English docstrings; and
    for each other language, drill id -> the texts last written into the drill's file
    (a translation the course has improved since is still the course's text). {} where
    the folder keeps nothing. A file that cannot be read stops the command
    (``UsageError``): it may hold the only copy of the English."""
    path = path_in(folder)
    try:  # the learner's own folder: read as a source is (no link, no FIFO, bounded)
        raw = sources.read(path, limit=MAX_RECORD_BYTES)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(_("cannot read {path}: {error}", path=path, error=exc.strerror or exc)) from None
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (UnicodeDecodeError, ValueError):
        data = None
    written = data.get("written", {}) if isinstance(data, dict) else None
    found = {"en": data.get("en"), **written} if isinstance(written, dict) and isinstance(data, dict) else None
    if found is None or not all(_drills(v) for v in found.values()):
        raise UsageError(_("{path} is not what torchdrill stubs writes (it keeps the course's English "
                           "docstrings): move it away, then run this again", path=path))
    return {lang: {drill: dict(texts) for drill, texts in drills.items()} for lang, drills in found.items()}


def _drills(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(drill, str) and isinstance(texts, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in texts.items())
        for drill, texts in value.items())


def read(folder: Path) -> dict[str, Texts]:
    """Drill id -> the course's English docstrings, as ``folder`` keeps them ({} for none)."""
    return read_all(folder).get("en", {})


def write(folder: Path, english: Mapping[str, Texts],
          written: Mapping[str, Mapping[str, Texts]] | None = None) -> Path:
    """Keep ``english`` (drill id -> texts) and ``written`` (language -> drill id -> the
    texts written) in ``folder``, atomically: a reader sees the old file or the new."""
    def drills(record: Mapping[str, Texts]) -> dict[str, Texts]:
        return {drill: dict(sorted(texts.items())) for drill, texts in sorted(record.items())}

    data = {"schema": SCHEMA, "en": drills(english),
            "written": {lang: drills(texts) for lang, texts in sorted((written or {}).items()) if lang != "en"}}
    return write_atomically(path_in(folder), json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def of_course(course: Path, drill_ids: list[str]) -> dict[str, Texts]:
    """The course's English docstrings of each drill, from its pristine stubs."""
    return {drill: drill_texts.docstrings(handout_source(course, drill)) for drill in drill_ids
            if (course / "exercises" / f"{drill}.py").is_file()}
