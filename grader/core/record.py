"""The learner's record: the ``results.json`` that ``grade``, ``check`` and ``watch``
update and ``list`` and the report read.

A grading of some drills (``grade --only``, ``check``) replaces those drills' rows
and keeps the others, so ``list``, the report and the score table agree
(``combine``). Rows are kept only when the earlier record describes the same thing:
the same submission folder and the same test suite (``suite_hash``: the tests, the
grader's version and any course secret). Otherwise, or when the earlier file cannot
be read (corrupt, an older torchdrill's), the new results replace it, and ``Update``
says why, for the command to tell the learner.

``update`` reads, combines and writes under a lock on the record's folder (two
``check`` runs at once both keep their drill), and renders what is derived from the
record (the report) under the same lock; the file is written atomically, so a
crash or Ctrl-C leaves the old record or the new one, never a part.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from grader.core import results_json
from grader.core.i18n import _
from grader.core.results_json import Results

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the atomic write still holds
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Update:
    """What the record holds now; the drills kept from the earlier record; why the
    earlier record was replaced instead of updated (None: it was updated, or there was
    none), a clause for ``replaced_note``."""

    results: Results
    kept: list[str] = field(default_factory=list)
    replaced: str | None = None


def combine(old: Results | None, new: Results, order: Iterable[str] = ()) -> Update:
    """``new``'s drills replace the same drills of ``old``, the others stay, in
    ``order`` (a course's drill ids); or ``new`` alone when ``old`` describes another
    submission or was graded by other tests."""
    if old is None:
        return Update(new)
    if not same_submission(old.get("submission"), new.get("submission")):
        return Update(new, replaced=_("it held the results of another submission ({other})",
                                      other=old.get("submission")))
    if old.get("suite_hash") is None or old.get("suite_hash") != new.get("suite_hash"):
        return Update(new, replaced=_("it was graded with other tests (the tests, torchdrill's version or "
                                      "the course secret changed since)"))
    graded = {ex["id"] for ex in new["exercises"]}
    kept = [ex["id"] for ex in old["exercises"] if ex["id"] not in graded]
    return Update(results_json.replace_exercises(old, new, order), kept)


def same_submission(a: object, b: object) -> bool:
    """Whether two results' ``submission`` fields name the same thing (a folder may be
    named through a link, or relative to another place)."""
    if a == b:
        return True
    if not isinstance(a, str) or not isinstance(b, str) or not os.path.isabs(a) or not os.path.isabs(b):
        return False
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def read(path: Path) -> tuple[Results | None, str | None]:
    """The record at ``path`` (None when there is none yet), its scores and statuses
    computed again from its outcomes (a hand-edited file says what its tests say), and
    why it cannot be used when it is there but unreadable."""
    try:
        return results_json.rescore(results_json.read(path), copy_first=False), None
    except FileNotFoundError:
        return None, None
    except ValueError:  # not JSON, or not results this torchdrill writes
        return None, _("it is not a results file this torchdrill can read (damaged, or written by "
                       "another version)")
    except OSError as exc:
        return None, _("it could not be read ({error})", error=exc)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (made if missing) for the block: one
    update of a record in it at a time. The lock goes with the process (a kill
    releases it); no lock file is left behind."""
    folder.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing lets the lock go


def update(path: Path, new: Results, order: Iterable[str] = (),
           then: Callable[[Results], object] | None = None) -> Update:
    """Combine ``new`` into the record at ``path`` and write it atomically; then call
    ``then`` with what the record holds (render the report), all under ``locked``.
    ``OSError`` when the record cannot be written (the old one is left as it was)."""
    with locked(path.parent):
        old, unreadable = read(path)
        done = combine(old, new, order)
        if unreadable is not None:
            done = Update(done.results, done.kept, unreadable)
        results_json.write(done.results, path)
        if then is not None:
            then(done.results)
    return done


def replaced_note(path: str | Path, done: Update) -> str | None:
    """The sentence that tells the learner their earlier record was replaced, or None."""
    if done.replaced is None:
        return None
    return _("{path} was replaced, not updated: {reason}", path=path, reason=done.replaced)
