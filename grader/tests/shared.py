"""Gradings made once per test session and shared by every test that reads them.

A grading costs seconds; many tests read the same one (the reference's results,
a round of the mutant corpus, a graded class). ``shared(factory, key, make)``
runs ``make(folder)`` once per pytest session, whatever the xdist worker that
asks first, and gives every test the JSON-able value it returned. Workers meet
in the session's base temporary folder (an xdist worker's own base folder is a
child of it) and take turns through a file lock, so a second worker asking for a
grading in progress waits for it instead of grading again; pytest-xdist's
``xdist_group`` is not needed (it does nothing with the pinned pytest 9.2 and
pytest-xdist 3.8: pytest-xdist#1386).

Every grading made is logged (``made.log``): ``assert_each_made_once`` is how the
suite checks, at its end, that none was made twice (``conftest.py``).
"""

from __future__ import annotations

import json
import os
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

T = TypeVar("T")
LOG = "made.log"


def session_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session shares (created if needed)."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "shared"
    folder.mkdir(exist_ok=True)
    return folder


def shared(factory: pytest.TempPathFactory, key: str, make: Callable[[Path], T]) -> T:
    """``make(folder)``'s value, made once per session for ``key`` (a file name).

    A ``make`` that raised is remembered too: every test that asks again fails with
    its error, without making it again.
    """
    root = session_folder(factory)
    folder, done, failed = root / key, root / f"{key}.json", root / f"{key}.failed"
    with FileLock(str(root / f"{key}.lock")):
        if done.exists():
            return json.loads(done.read_text())
        if failed.exists():
            pytest.fail(failed.read_text(), pytrace=False)
        folder.mkdir(exist_ok=True)
        with open(root / LOG, "a") as log:
            log.write(key + "\n")
        try:
            value = make(folder)
        except Exception:
            failed.write_text(f"making the shared grading {key} failed:\n{traceback.format_exc()}")
            raise
        done.write_text(json.dumps(value))
        return value


def made_twice(root: Path) -> list[str]:
    """Keys made more than once in the session whose shared folder is ``root``."""
    log = root / LOG
    counts = Counter(log.read_text().split()) if log.exists() else Counter()
    return sorted(key for key, n in counts.items() if n > 1)
