"""Where a submission's exercises are, and reading them: the rules every intake shares.

An ``Entry`` is one thing handed in: a folder, a ``.zip`` or a notebook (``grade-all``
finds one per student with ``discover``, the student id being the entry's name
without ``.zip``; ``grader.intake.submission`` classifies what a user names with
``entry_of``). ``discover`` says, for each entry that is not a submission, why; one
bad entry never stops the others. ``files`` reads an entry's ``.py`` files as they
will be graded; ``notebook`` reads a notebook's code into exercise files.

Where the exercises may sit, in a folder or a zip alike (the "root"):

- at the top (``tensors/one_hot.py``),
- under ``exercises/`` (a student's handout folder),
- under one top folder (``alice/tensors/one_hot.py``: what zipping a folder makes),
- under ``<top folder>/exercises/`` (a zipped handout folder).

Exactly one of these may hold exercise files (``<root>/<exercise id>.py``);
two are ambiguous and deeper is refused, each with a sentence that says what
was found where. With none, a notebook (exactly one ``.ipynb`` at one of those
places) or loose drill files (``one_hot.py`` for ``tensors/one_hot``, at the top
or under one top folder; a name two drills share is left out) are the submission.

A notebook's code is read by ``grader.intake.notebooks`` (nbformat and ``ast``: no
cell ever runs on this side). Only the sources under the root are read, by the one
rule ``grader.core.sources`` gives (the sandbox copies by it too): ``.py`` files, no
dotfiles or dot folders, no symbolic links, a file over ``MAX_SOURCE_BYTES``
skipped, at most ``MAX_SUBMISSION_BYTES`` in all.

Symbolic links are never followed out of an entry: an entry that is itself a
link is a problem (reported, so no student silently vanishes from the class),
and links inside an entry are ignored, wherever they point (as the sandbox's
copy ignores them); a submission left with no exercise file says how many
links it ignored. Zip members that are symbolic links are ignored the same way;
zips themselves are read without trusting them (``grader.intake.archives``).
"""

from __future__ import annotations

import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from grader.core.i18n import _
from grader.core.sources import (
    MAX_SOURCE_BYTES,
    MAX_SUBMISSION_BYTES,
    Listing,
    Member,
    folders_clash,
    mib,
    select,
    walk,
)
from grader.core.sources import read as read_source
from grader.core.students import Lookalikes, shown_id, student_id_problem, student_name
from grader.intake import notebooks
from grader.intake.archives import (
    SubmissionProblem,
    check_member,
    open_zip,
    read_member,
    zip_listing,
)

ZIP_SUFFIX = ".zip"
HANDOUT_FOLDER = "exercises"
# nbgrader's convention for when a submission was handed in: ``alice.timestamp.txt`` beside
# any entry (the instructor's), or ``alice/timestamp.txt`` inside a folder entry (the student's
# word, read only when asked for): ``grader.intake.times``
TIMESTAMP_FILE = "timestamp.txt"
TIMESTAMP_SUFFIX = "." + TIMESTAMP_FILE


Kind = Literal["folder", "zip", "notebook", "other"]


@dataclass
class Entry:
    """One child of the submissions folder.

    ``kind`` is "other" for what is neither a folder nor a ``.zip`` (always with a
    problem). ``problem`` says why the entry cannot be graded (None when it can);
    ``root`` is the folder inside the entry that holds the exercises layout
    (posix, "" for the top), found by ``discover`` and used by ``files``.
    """

    student: str
    source: Path
    kind: Kind
    problem: str | None = None
    root: str = ""
    notebook: str | None = None  # the notebook graded (a path in the folder or zip), if any
    loose: dict[str, str] | None = None  # loose drill files: their path under the root -> where they belong

    @property
    def label(self) -> str:
        """The entry as problems name it: ``alice/``, ``alice.zip``."""
        return self.source.name + ("/" if self.kind == "folder" else "")


# ------------------------------------------------------------------ discovering

def discover(folder: Path, exercise_ids: Collection[str]) -> list[Entry]:
    """Every entry of ``folder`` (but dotfiles and ``ID.timestamp.txt`` files), sorted
    by student id, each with the reason it cannot be graded, if any. ``exercise_ids``
    ("tensors/one_hot", ...) tell a submission from anything else. Raises ``NotADirectoryError`` when
    ``folder`` is not a folder: that is the caller's mistake, not a student's."""
    if not folder.is_dir():
        raise NotADirectoryError(f"submissions folder {folder} is not a folder")
    ids = sorted(set(exercise_ids))
    entries = [_entry(child, ids) for child in folder.iterdir()
               if not child.name.startswith(".") and not child.name.endswith(TIMESTAMP_SUFFIX)]
    _mark_duplicates(entries)
    return sorted(entries, key=lambda e: (e.student, e.source.name))


def entry_of(path: Path, exercise_ids: Collection[str], student: str) -> Entry:
    """One submission that is not one entry of a class folder (the Gradescope
    autograder's ``/autograder/submission``, or a zip or notebook inside it), as
    ``discover`` would read it, for ``student``: every check but the id rule."""
    return _entry(path, sorted(set(exercise_ids)), student=student)


def _entry(path: Path, exercise_ids: list[str], student: str | None = None) -> Entry:
    entry = _classify(path)
    if student is not None:
        entry.student = student
    elif entry.problem is None:
        entry.problem = student_id_problem(entry.student)
        if entry.problem is not None:
            entry.problem = f"{entry.label}: {entry.problem}"
    if entry.problem is None and entry.kind != "notebook":
        try:
            listing = _listing(entry)
            entry.root = _locate(entry, listing, exercise_ids)
            if entry.notebook is None:
                _selected(entry, listing)
        except SubmissionProblem as exc:
            entry.problem = str(exc)
        except OSError as exc:
            entry.problem = f"{entry.label} cannot be read: {exc}"
        except Exception as exc:  # noqa: BLE001 - one odd entry must not stop the class
            entry.problem = f"{entry.label} could not be read ({type(exc).__name__}: {exc})"
    if entry.problem is not None and entry.kind == "folder" and not entry.source.is_symlink():
        return _one_zip_inside(entry, exercise_ids) or entry
    return entry


def _one_zip_inside(folder: Entry, exercise_ids: list[str]) -> Entry | None:
    """A folder with no submission in it but one ``.zip`` at its top (an upload form that
    keeps the zip as it came): that zip's entry, for the folder's student, when it is one."""
    try:
        zips = [p for p in folder.source.iterdir() if _is_zip_name(p.name) and not p.name.startswith(".")
                and stat.S_ISREG(p.lstat().st_mode)]
    except OSError:
        return None
    if len(zips) != 1:
        return None
    inner = _entry(zips[0], exercise_ids, student=folder.student)
    return inner if inner.problem is None else None


def _classify(path: Path) -> Entry:
    """Folder, zip or other, from what the entry is (a link is never followed)."""
    name = student_name(path.name)  # composed (NFC): a Mac writes 'José' decomposed
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        return Entry(name, path, "other", f"{name} cannot be read: {exc}")
    if stat.S_ISLNK(mode):
        kind: Kind = "zip" if _is_zip_name(name) else "other"
        student = name[: -len(ZIP_SUFFIX)] if kind == "zip" else name
        return Entry(student, path, kind, f"{name} is a symbolic link: submissions are read only "
                                          "from real folders and .zip files inside the submissions folder")
    if stat.S_ISDIR(mode):
        return Entry(name, path, "folder")
    if _is_zip_name(name):
        entry = Entry(name[: -len(ZIP_SUFFIX)], path, "zip")
        if not stat.S_ISREG(mode):
            entry.problem = f"{name} is not a regular file"
        return entry
    if notebooks.is_notebook_name(name):
        entry = Entry(name[: -len(notebooks.NOTEBOOK_SUFFIX)], path, "notebook", notebook=name)
        if not stat.S_ISREG(mode):
            entry.problem = f"{name} is not a regular file"
        return entry
    what = "a file" if stat.S_ISREG(mode) else "a special file (not a regular file)"
    return Entry(name, path, "other", f"{name} is {what}, neither a folder, a .zip file nor a notebook: "
                                      "only folders laid out like exercises/, .zip files of one and "
                                      ".ipynb notebooks are graded")


def _is_zip_name(name: str) -> bool:
    return name.lower().endswith(ZIP_SUFFIX) and len(name) > len(ZIP_SUFFIX)


def _mark_duplicates(entries: list[Entry]) -> None:
    """Two entries for one student (``alice/`` and ``alice.zip``; ``alice`` and
    ``Alice``, whose report folders collide on case-insensitive file systems) are
    both refused: which one to grade is the instructor's call."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.student.casefold(), []).append(entry)
    for group in groups.values():
        if len(group) > 1:
            names = sorted(e.label for e in group)
            for entry in group:
                others = [n for n in names if n != entry.label]
                entry.problem = (f"{entry.label}: student {entry.student} has more than one entry "
                                 f"({', '.join(names)}): keep one, then grade again")
                if any(e.student != entry.student for e in group):
                    entry.problem += (" (ids that differ only in case collide on case-insensitive "
                                      f"file systems: {', '.join(others)})")


def lookalike_notes(entries: list[Entry], known: Collection[str] = ()) -> dict[str, str]:
    """Student id -> a note for each entry whose id looks like another's
    (``grader.core.students``: Unicode's confusables after NFKC and case folding), in this
    folder or among the gradebook's students (``known``); every id is read once.

    Such entries are graded all the same, each with its note shown loudly: which ids are
    one student is the instructor's call. Refusing them would let a student who names an
    entry like a classmate's keep the classmate from ever being graded, and refuse honest
    names that the confusables table joins (``amie`` and ``arnie``, ``李鹃`` and ``李鹂``)."""
    known = set(known)
    index = Lookalikes(known)
    index.add(entry.student for entry in entries)
    here = {entry.student for entry in entries}
    notes: dict[str, str] = {}
    for group in index.groups():
        for student in sorted(set(group) & here):
            others = [shown_id(s) for s in group if s != student]
            notes[student] = _("student id {student} looks like {others}: graded, but check that they are "
                               "different students (a report uploaded under the wrong one goes to the wrong "
                               "person)", student=shown_id(student), others=_some(others))
    return notes


def _some(names: list[str], count: int | None = None, shown: int = 5) -> str:
    """The first ``shown`` of ``names`` (the first of ``count``, when given), and how many
    more: a problem stays one line however many entries look alike."""
    count = len(names) if count is None else count
    if count <= shown:
        return ", ".join(names[:shown])
    return _("{names} and {count} more", names=", ".join(names[:shown]), count=count - shown)


# ------------------------------------------------------------------ listing an entry

def _listing(entry: Entry) -> Listing:
    if entry.kind == "folder":
        return _folder_listing(entry)
    with open_zip(entry.source, entry.label) as zf:
        return zip_listing(entry.label, zf)


def _folder_listing(entry: Entry) -> Listing:
    return walk(entry.source, entry.label)


# ------------------------------------------------------------------ where the exercises are

def _candidate_roots(members: Iterable[Member]) -> list[str]:
    """The accepted roots (see the module docstring), shallowest first."""
    tops = sorted({m.path.split("/", 1)[0] for m in members if "/" in m.path})
    roots = ["", HANDOUT_FOLDER]
    for top in tops:
        roots += [top, f"{top}/{HANDOUT_FOLDER}"]
    return list(dict.fromkeys(roots))


def _locate(entry: Entry, listing: Listing, exercise_ids: list[str]) -> str:
    """The one root holding exercise files, or a problem that says what was found."""
    paths = {m.path for m in listing.members}
    in_zip = entry.kind == "zip"
    hits = {}
    for root in _candidate_roots(listing.members):
        found = [i for i in exercise_ids if (f"{root}/{i}.py" if root else f"{i}.py") in paths]
        if found:
            hits[root] = found
    if len(hits) == 1:
        return next(iter(hits))
    if len(hits) > 1:
        copies = [f"{r}/{found[0]}.py" if r else f"{found[0]}.py" for r, found in hits.items()]
        raise SubmissionProblem(_("{label} has exercise files in {count} places ({copies}): keep one "
                                  "copy of the exercise folders", label=entry.label, count=len(hits),
                                  copies=", ".join(copies)))
    found_notebooks = _notebooks(listing)
    if len(found_notebooks) == 1:
        entry.notebook = found_notebooks[0]
        return str(PurePosixPath(found_notebooks[0]).parent).removeprefix(".")
    if found_notebooks:
        raise SubmissionProblem(_("{label} has no exercise file and {count} notebooks ({notebooks}): "
                                  "hand in one notebook", label=entry.label, count=len(found_notebooks),
                                  notebooks=", ".join(found_notebooks[:4])))
    loose = _loose(listing, exercise_ids)
    if loose is not None:
        entry.root, entry.loose = loose
        return entry.root
    deep = _too_deep(paths, exercise_ids)
    if deep:
        exercise, prefix = deep
        raise SubmissionProblem(
            _("{label}: found {exercise}.py under {prefix}/: put the exercise folders at the top of the zip",
              label=entry.label, exercise=exercise, prefix=prefix) if in_zip else
            _("{label}: found {exercise}.py under {prefix}/: put the exercise folders at the top of the "
              "folder", label=entry.label, exercise=exercise, prefix=prefix))
    if not listing.members:
        raise SubmissionProblem(
            _("{label} is empty (it holds {links} symbolic link(s), which are ignored)",
              label=entry.label, links=listing.links) if listing.links else
            _("{label} is empty", label=entry.label))
    example = exercise_ids[0] if exercise_ids else "topic/drill"
    notes = _no_exercise_hints(listing, exercise_ids)
    raise SubmissionProblem(
        (_("{label} has no exercise file: expected e.g. {example}.py at the top of the zip, under "
           "exercises/, or under one top folder", label=entry.label, example=example) if in_zip else
         _("{label} has no exercise file: expected e.g. {example}.py at the top of the folder, under "
           "exercises/, or under one top folder", label=entry.label, example=example))
        + "".join(_("; {note}", note=note) for note in notes))


def _notebooks(listing: Listing) -> list[str]:
    """The notebooks at the accepted roots (``.ipynb_checkpoints`` copies are hidden)."""
    roots = set(_candidate_roots(listing.members))
    found = []
    for member in listing.members:
        if notebooks.is_notebook_name(member.path):
            folder = str(PurePosixPath(member.path).parent)
            if (folder if folder != "." else "") in roots:
                found.append(member.path)
    return sorted(found)


def drills_named(exercise_ids: Iterable[str]) -> dict[str, list[str]]:
    """A drill's own file name (``one_hot.py``) -> the drills it names: more than one
    where two topics share a drill's name."""
    by_name: dict[str, list[str]] = {}
    for drill in exercise_ids:
        by_name.setdefault(f"{PurePosixPath(drill).name}.py", []).append(drill)
    return by_name


def _loose(listing: Listing, exercise_ids: list[str]) -> tuple[str, dict[str, str]] | None:
    """Loose drill files (``one_hot.py`` for ``tensors/one_hot``) at the top, or under
    the one top folder: (that root, their paths under it -> where each belongs). A
    name two drills share is left out: which one it is would be a guess."""
    by_name = drills_named(exercise_ids)
    found: dict[str, dict[str, str]] = {}
    for member in listing.members:
        folder, _slash, name = member.path.rpartition("/")
        drills = by_name.get(name, [])
        if "/" not in folder and len(drills) == 1:
            found.setdefault(folder, {})[name] = f"{drills[0]}.py"
    if len(found) != 1:
        return None
    return next(iter(found.items()))


def _too_deep(paths: set[str], exercise_ids: list[str]) -> tuple[str, str] | None:
    """(exercise id, the folder it was found under) for the shallowest exercise file
    below the accepted depths."""
    ids = set(exercise_ids)
    found = []
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path.removesuffix(".py").split("/")
        for cut in range(1, len(parts)):
            exercise = "/".join(parts[cut:])
            if exercise in ids:
                found.append((cut, "/".join(parts[:cut]), exercise))
    if not found:
        return None
    _depth, prefix, exercise = min(found)
    return exercise, prefix


def _no_exercise_hints(listing: Listing, exercise_ids: list[str]) -> list[str]:
    """What was there instead: a drill file out of its topic folder, a nested zip, links."""
    notes = []
    by_name = {name: drills[-1] for name, drills in drills_named(exercise_ids).items()}
    for member in sorted(listing.members, key=lambda m: (m.path.count("/"), m.path)):
        name = PurePosixPath(member.path).name
        if name in by_name:
            notes.append(_("found {path}, which belongs at {drill}.py", path=member.path, drill=by_name[name]))
            break
    zips = sorted(m.path for m in listing.members if m.path.lower().endswith(ZIP_SUFFIX))
    if zips:
        notes.append(_("it holds {zip}: zips inside a submission are not opened", zip=zips[0]))
    if listing.links:
        notes.append(_("{links} symbolic link(s) were ignored", links=listing.links))
    return notes


def _selected(entry: Entry, listing: Listing) -> list[tuple[str, Member]]:
    """The members that will be read, keyed by their path under the root, checked
    against the caps (nothing is decompressed here)."""
    selection = select(listing.members, entry.root)
    if entry.loose is not None:
        loose = entry.loose
        selection.chosen = [(loose[rel], member) for rel, member in selection.chosen if rel in loose]
    for _rel, member in selection.chosen:
        if member.info is not None:
            check_member(entry.label, member.info)
    if selection.total > MAX_SUBMISSION_BYTES:
        raise SubmissionProblem(_("{label}: its .py files come to {size} (at most {limit})", label=entry.label,
                                  size=mib(selection.total), limit=mib(MAX_SUBMISSION_BYTES)))
    if not selection.chosen and selection.oversized:
        raise SubmissionProblem(_("{label}: every .py file is over {limit} (e.g. {example}), so none can "
                                  "be graded", label=entry.label, limit=mib(MAX_SOURCE_BYTES),
                                  example=selection.oversized[0]))
    clash = folders_clash(rel for rel, _member in selection.chosen)
    if clash:
        raise SubmissionProblem(_("{label} has {path} both as a file and as a folder", label=entry.label,
                                  path=clash))
    return selection.chosen


# ------------------------------------------------------------------ reading

def files(entry: Entry) -> dict[str, bytes]:
    """The submission's ``.py`` files as graded: path under the root (posix) -> bytes.

    Read again from disk with every check ``discover`` made (the entry may have
    changed since); raises ``SubmissionProblem`` when the entry is not gradable or
    cannot be read now."""
    if entry.problem is not None:
        raise SubmissionProblem(entry.problem)
    if entry.notebook is not None:
        raise SubmissionProblem(_("{label} is a notebook: read it with notebook()", label=entry.label))
    try:
        if entry.kind == "folder":
            return _read_folder(entry)
        if entry.kind == "zip":
            return _read_zip(entry)
    except OSError as exc:
        raise SubmissionProblem(_("{label} cannot be read: {error}", label=entry.label, error=exc)) from None
    raise SubmissionProblem(_("{label} is neither a folder nor a .zip file", label=entry.label))


def _read_folder(entry: Entry) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    total = 0
    for rel, member in _selected(entry, _folder_listing(entry)):
        data = read_source(entry.source / member.path)
        if data is None:
            continue  # no longer a regular file, or grew over the cap: skipped as listed
        total += len(data)
        if total > MAX_SUBMISSION_BYTES:
            raise SubmissionProblem(_("{label}: its .py files come to more than {limit}", label=entry.label,
                                      limit=mib(MAX_SUBMISSION_BYTES)))
        out[rel] = data
    return _nonempty(entry, out)


def _read_zip(entry: Entry) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with open_zip(entry.source, entry.label) as zf:
        for rel, member in _selected(entry, zip_listing(entry.label, zf)):
            assert member.info is not None
            out[rel] = read_member(entry.label, zf, member.info)
    return _nonempty(entry, out)


def notebook(entry: Entry, stubs: dict[str, notebooks.Stub]) -> notebooks.Extraction:
    """A notebook submission read into exercise files (``grader.intake.notebooks``: parsed,
    never run), with the cell each function came from. Raises ``SubmissionProblem``
    when it cannot be read or defines no drill's function."""
    if entry.problem is not None:
        raise SubmissionProblem(entry.problem)
    if entry.notebook is None:
        raise SubmissionProblem(_("{label} holds no notebook", label=entry.label))
    name = PurePosixPath(entry.notebook).name
    try:
        data = _notebook_bytes(entry)
        extraction = notebooks.extract(name, data, stubs)
    except notebooks.NotebookProblem as exc:
        raise SubmissionProblem(f"{entry.label}: {exc}") from None
    except OSError as exc:
        raise SubmissionProblem(_("{label} cannot be read: {error}", label=entry.label, error=exc)) from None
    if not extraction.files:
        raise SubmissionProblem(_("{label}: no cell of {name} defines a drill's function, so there is "
                                  "nothing to grade", label=entry.label, name=name))
    return extraction


def _notebook_bytes(entry: Entry) -> bytes:
    assert entry.notebook is not None
    if entry.kind == "notebook":
        return notebooks.read_bytes(entry.source)
    if entry.kind == "folder":
        return notebooks.read_bytes(entry.source.joinpath(*entry.notebook.split("/")))
    with open_zip(entry.source, entry.label) as zf:
        members = {m.path: m for m in zip_listing(entry.label, zf).members}
        member = members.get(entry.notebook)
        if member is None or member.info is None:
            raise SubmissionProblem(_("{label} no longer holds {notebook}", label=entry.label,
                                      notebook=entry.notebook))
        if member.size > notebooks.MAX_NOTEBOOK_BYTES:
            raise SubmissionProblem(_("{label}: {notebook} is {size} (at most {limit})", label=entry.label,
                                      notebook=entry.notebook, size=mib(member.size),
                                      limit=mib(notebooks.MAX_NOTEBOOK_BYTES)))
        check_member(entry.label, member.info)
        return read_member(entry.label, zf, member.info, notebooks.MAX_NOTEBOOK_BYTES)


def _nonempty(entry: Entry, out: dict[str, bytes]) -> dict[str, bytes]:
    if not out:
        raise SubmissionProblem(_("{label} has no .py file left to grade", label=entry.label))
    return out


