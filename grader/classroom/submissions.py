"""A class's submissions: find them in a folder, read them safely, hash and pack them.

``torchdrill grade-all SUBMISSIONS`` gets a folder with one entry per student:
a folder laid out like ``exercises/`` or a ``.zip`` of one (the student id is the
entry's name, without ``.zip``). ``discover`` lists the entries and says, for
each one that is not a submission, why; one bad entry never stops the others.
``files`` reads a submission's ``.py`` files as they will be graded,
``content_hash`` names that content (resumable class grading skips what it has
graded already), and ``pack``/``unpack`` carry it to a grading process, possibly
on another machine.

Where the exercises may sit, in a folder or a zip alike (the "root"):

- at the top (``tensors/one_hot.py``),
- under ``exercises/`` (a student's handout, as ``course.submission_folder`` grades it),
- under one top folder (``alice/tensors/one_hot.py``: what zipping a folder makes),
- under ``<top folder>/exercises/`` (a zipped handout folder).

Exactly one of these may hold exercise files (``<root>/<exercise id>.py``);
two are ambiguous and deeper is refused, each with a sentence that says what
was found where.

A notebook is a submission too: an entry ``alice.ipynb``, or a folder or zip with
no exercise file and exactly one ``.ipynb`` at one of those places. Its code is
read by ``grader.core.notebooks`` (nbformat and ``ast``: no cell ever runs on this
side) into exercise files (``notebook``), which are then hashed, packed and
graded like any other. Only the sources under the root are read, by the one rule
``grader.core.sources`` gives (the sandbox copies by it too): ``.py`` files, no
dotfiles or dot folders, no symbolic links, a file over ``MAX_SOURCE_BYTES``
skipped, at most ``MAX_SUBMISSION_BYTES`` in all.

Symbolic links are never followed out of an entry: an entry that is itself a
link is a problem (reported, so no student silently vanishes from the class),
and links inside an entry are ignored, wherever they point (as the sandbox's
copy ignores them); a submission left with no exercise file says how many
links it ignored. Zip members that are symbolic links are ignored the same way.

Zips are read without trusting them: the member count and central directory
size are checked from the archive's end record before ``zipfile`` parses the
directory; absolute or ``..`` member names (zip-slip) and encrypted members
refuse the whole zip; members that will be read must be stored or deflated
(bzip2 and lzma decompress without an output bound), expand at most
``MAX_RATIO`` times, and are read with a cap whatever their headers declare.
Members that are not read (a student's data files, a zipped ``.venv``) are
never decompressed, so their sizes do not matter.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import struct
import zipfile
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from grader.core import notebooks
from grader.core.files import remove_tree
from grader.core.sources import (
    IGNORED_NAMES,
    MAX_FILES,
    MAX_SOURCE_BYTES,
    MAX_SUBMISSION_BYTES,
    Listing,
    Member,
    SourceProblem,
    folders_clash,
    mib,
    parts,
    path_problem,
    select,
    unsafe_name,
    walk,
)
from grader.core.sources import read as read_source
from grader.core.students import student_id_problem

MAX_MEMBERS = MAX_FILES  # zip members (a zipped handout with its .venv stays under it)
MAX_DIRECTORY_BYTES = 32 * 2**20  # a zip's central directory, checked before it is parsed
MAX_RATIO = 100  # uncompressed / compressed size of a member that is read...
RATIO_FLOOR_BYTES = 64 * 2**10  # ...once it is this big (a tiny file proves nothing)

ZIP_SUFFIX = ".zip"
HANDOUT_FOLDER = "exercises"
READ_COMPRESSION = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
PACK_TIME = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: packs do not depend on clocks


Kind = Literal["folder", "zip", "notebook", "other"]


# An entry is not a gradable submission, or became unreadable; one sentence naming it.
SubmissionProblem = SourceProblem


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

    @property
    def label(self) -> str:
        """The entry as problems name it: ``alice/``, ``alice.zip``."""
        return self.source.name + ("/" if self.kind == "folder" else "")


# ------------------------------------------------------------------ discovering

def discover(folder: Path, exercise_ids: Collection[str]) -> list[Entry]:
    """Every entry of ``folder`` (but dotfiles), sorted by student id, each with the
    reason it cannot be graded, if any. ``exercise_ids`` ("tensors/one_hot", ...)
    tell a submission from anything else. Raises ``NotADirectoryError`` when
    ``folder`` is not a folder: that is the caller's mistake, not a student's."""
    if not folder.is_dir():
        raise NotADirectoryError(f"submissions folder {folder} is not a folder")
    ids = sorted(set(exercise_ids))
    entries = [_entry(child, ids) for child in folder.iterdir() if not child.name.startswith(".")]
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
    return entry


def _classify(path: Path) -> Entry:
    """Folder, zip or other, from what the entry is (a link is never followed)."""
    name = path.name
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
        groups.setdefault(entry.student.lower(), []).append(entry)
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


# ------------------------------------------------------------------ listing an entry

def _listing(entry: Entry) -> Listing:
    if entry.kind == "folder":
        return _folder_listing(entry)
    with _open_zip(entry) as zf:
        return _zip_listing(entry, zf)


def _folder_listing(entry: Entry) -> Listing:
    return walk(entry.source, entry.label)


@contextlib.contextmanager
def _open_zip(entry: Entry) -> Iterator[zipfile.ZipFile]:
    """The zip, opened (never through a link, never blocking on a pipe) only once its
    end record shows a directory within the caps."""
    try:
        fd = os.open(entry.source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise SubmissionProblem(f"{entry.label} cannot be read: {exc}") from None
    with os.fdopen(fd, "rb") as fp:
        if not stat.S_ISREG(os.fstat(fp.fileno()).st_mode):
            raise SubmissionProblem(f"{entry.label} is not a regular file")
        _check_directory(entry.label, fp)
        with _zipfile(entry.label, fp) as zf:
            yield zf


def _zipfile(label: str, fp: BinaryIO) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, struct.error, UnicodeDecodeError) as exc:
        raise SubmissionProblem(f"{label} is not a readable zip file "
                                f"(zipfile says: {exc or type(exc).__name__})") from None


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def _directory_size(fp: BinaryIO) -> tuple[int, int] | None:
    """(member count, central directory bytes) from the end record, read before
    ``zipfile`` parses (and keeps in memory) the whole directory. None when there
    is no end record: ``zipfile`` then says what is wrong."""
    size = fp.seek(0, io.SEEK_END)
    tail_size = min(size, _EOCD.size + 0xFFFF)
    fp.seek(size - tail_size)
    tail = fp.read(tail_size)
    at = len(tail) - _EOCD.size  # where it is when the zip has no comment; else search
    if at < 0 or tail[at:at + 4] != b"PK\x05\x06" or tail[-2:] != b"\0\0":
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        return None
    count, directory = _EOCD.unpack_from(tail, at)[4:6]
    if count != 0xFFFF and directory != 0xFFFFFFFF:
        return count, directory
    locator = at - _ZIP64_LOCATOR.size
    if locator < 0:
        return None
    signature, _, offset, _ = _ZIP64_LOCATOR.unpack_from(tail, locator)
    if signature != b"PK\x06\x07" or offset + _ZIP64_EOCD.size > size:
        return None
    fp.seek(offset)
    record = fp.read(_ZIP64_EOCD.size)
    if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
        return None
    fields = _ZIP64_EOCD.unpack(record)
    return fields[6], fields[7]


def _check_directory(label: str, fp: BinaryIO) -> None:
    found = _directory_size(fp)
    fp.seek(0)
    if found is None:
        return
    count, directory = found
    if count > MAX_MEMBERS:
        raise SubmissionProblem(f"{label} has {count:,} members (at most {MAX_MEMBERS:,}): "
                                "hand in the exercises only")
    if directory > MAX_DIRECTORY_BYTES:
        raise SubmissionProblem(f"{label} has a {mib(directory)} member directory "
                                f"(at most {mib(MAX_DIRECTORY_BYTES)}): hand in the exercises only")


def _zip_listing(entry: Entry, zf: zipfile.ZipFile) -> Listing:
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise SubmissionProblem(f"{entry.label} has {len(infos):,} members (at most {MAX_MEMBERS:,}): "
                                "hand in the exercises only")
    listing = Listing([])
    seen: set[str] = set()
    for info in infos:
        unsafe = unsafe_name(info.filename)
        if unsafe:
            raise SubmissionProblem(f"{entry.label} has a member named {info.filename!r}, {unsafe}: "
                                    "a zip like that could write outside its folder (zip-slip); "
                                    "re-zip the exercises with relative paths")
        if info.flag_bits & 0x1:
            raise SubmissionProblem(f"{entry.label} is encrypted (member {info.filename!r} needs a "
                                    "password): hand in a zip without a password")
        names = parts(info.filename)
        if info.is_dir() or not names or any(p.startswith(".") for p in names) \
                or names[0] in IGNORED_NAMES:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            listing.links += 1
            continue
        path = "/".join(names)
        if path in seen:
            raise SubmissionProblem(f"{entry.label} holds two members named {path}: "
                                    "re-zip it so that each file is there once")
        seen.add(path)
        listing.members.append(Member(path, info.file_size, info))
    return listing


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
    where = "zip" if entry.kind == "zip" else "folder"
    hits = {}
    for root in _candidate_roots(listing.members):
        found = [i for i in exercise_ids if (f"{root}/{i}.py" if root else f"{i}.py") in paths]
        if found:
            hits[root] = found
    if len(hits) == 1:
        return next(iter(hits))
    if len(hits) > 1:
        copies = [f"{r}/{found[0]}.py" if r else f"{found[0]}.py" for r, found in hits.items()]
        raise SubmissionProblem(f"{entry.label} has exercise files in {len(hits)} places "
                                f"({', '.join(copies)}): keep one copy of the exercise folders")
    found_notebooks = _notebooks(listing)
    if len(found_notebooks) == 1:
        entry.notebook = found_notebooks[0]
        return str(PurePosixPath(found_notebooks[0]).parent).removeprefix(".")
    if found_notebooks:
        raise SubmissionProblem(f"{entry.label} has no exercise file and {len(found_notebooks)} "
                                f"notebooks ({', '.join(found_notebooks[:4])}): hand in one notebook")
    deep = _too_deep(paths, exercise_ids)
    if deep:
        exercise, prefix = deep
        raise SubmissionProblem(f"{entry.label}: found {exercise}.py under {prefix}/: "
                                f"put the exercise folders at the top of the {where}")
    if not listing.members:
        ignored = f" (it holds {listing.links} symbolic link(s), which are ignored)" if listing.links else ""
        raise SubmissionProblem(f"{entry.label} is empty{ignored}")
    example = exercise_ids[0] if exercise_ids else "topic/drill"
    raise SubmissionProblem(f"{entry.label} has no exercise file: expected e.g. {example}.py at the "
                            f"top of the {where}, under exercises/, or under one top folder"
                            + _no_exercise_hints(listing, exercise_ids))


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
    _, prefix, exercise = min(found)
    return exercise, prefix


def _no_exercise_hints(listing: Listing, exercise_ids: list[str]) -> str:
    """What was there instead: a drill file out of its topic folder, a nested zip, links."""
    notes = []
    by_name = {PurePosixPath(i).name + ".py": i for i in exercise_ids}
    for member in sorted(listing.members, key=lambda m: (m.path.count("/"), m.path)):
        name = PurePosixPath(member.path).name
        if name in by_name:
            notes.append(f"found {member.path}, which belongs at {by_name[name]}.py")
            break
    zips = sorted(m.path for m in listing.members if m.path.lower().endswith(ZIP_SUFFIX))
    if zips:
        notes.append(f"it holds {zips[0]}: zips inside a submission are not opened")
    if listing.links:
        notes.append(f"{listing.links} symbolic link(s) were ignored")
    return "; " + "; ".join(notes) if notes else ""


def _selected(entry: Entry, listing: Listing) -> list[tuple[str, Member]]:
    """The members that will be read, keyed by their path under the root, checked
    against the caps (nothing is decompressed here)."""
    selection = select(listing.members, entry.root)
    for _, member in selection.chosen:
        if member.info is not None:
            _check_member(entry.label, member.info)
    if selection.total > MAX_SUBMISSION_BYTES:
        raise SubmissionProblem(f"{entry.label}: its .py files come to {mib(selection.total)} "
                                f"(at most {mib(MAX_SUBMISSION_BYTES)})")
    if not selection.chosen and selection.oversized:
        raise SubmissionProblem(f"{entry.label}: every .py file is over {mib(MAX_SOURCE_BYTES)} "
                                f"(e.g. {selection.oversized[0]}), so none can be graded")
    clash = folders_clash(rel for rel, _ in selection.chosen)
    if clash:
        raise SubmissionProblem(f"{entry.label} has {clash} both as a file and as a folder")
    return selection.chosen


def _check_member(label: str, info: zipfile.ZipInfo) -> None:
    """A member about to be read: a compression with bounded output, a sane ratio."""
    if info.compress_type not in READ_COMPRESSION:
        # compressor_names: zipfile's own table of method names, left out of typeshed's stubs
        method = zipfile.compressor_names.get(info.compress_type, f"method {info.compress_type}")  # type: ignore[attr-defined]
        raise SubmissionProblem(f"{label}: {info.filename} is compressed with {method}; only stored "
                                "or deflated members are read (zip it with a standard zip tool)")
    if info.file_size >= RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        raise SubmissionProblem(f"{label}: {info.filename} expands {ratio:,.0f} times (at most "
                                f"{MAX_RATIO}): that is a zip bomb, not source code")


# ------------------------------------------------------------------ reading

def files(entry: Entry) -> dict[str, bytes]:
    """The submission's ``.py`` files as graded: path under the root (posix) -> bytes.

    Read again from disk with every check ``discover`` made (the entry may have
    changed since); raises ``SubmissionProblem`` when the entry is not gradable or
    cannot be read now."""
    if entry.problem is not None:
        raise SubmissionProblem(entry.problem)
    if entry.notebook is not None:
        raise SubmissionProblem(f"{entry.label} is a notebook: read it with notebook()")
    try:
        if entry.kind == "folder":
            return _read_folder(entry)
        if entry.kind == "zip":
            return _read_zip(entry)
    except OSError as exc:
        raise SubmissionProblem(f"{entry.label} cannot be read: {exc}") from None
    raise SubmissionProblem(f"{entry.label} is neither a folder nor a .zip file")


def _read_folder(entry: Entry) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    total = 0
    for rel, member in _selected(entry, _folder_listing(entry)):
        data = read_source(entry.source / member.path)
        if data is None:
            continue  # no longer a regular file, or grew over the cap: skipped as listed
        total += len(data)
        if total > MAX_SUBMISSION_BYTES:
            raise SubmissionProblem(f"{entry.label}: its .py files come to more than "
                                    f"{mib(MAX_SUBMISSION_BYTES)}")
        out[rel] = data
    return _nonempty(entry, out)


def _read_zip(entry: Entry) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with _open_zip(entry) as zf:
        for rel, member in _selected(entry, _zip_listing(entry, zf)):
            assert member.info is not None
            out[rel] = _read_member(entry.label, zf, member.info)
    return _nonempty(entry, out)


def _read_member(label: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo,
                 limit: int = MAX_SOURCE_BYTES) -> bytes:
    """A member's bytes, never more than it declares (``zipfile`` stops there and
    checks the CRC) nor more than the cap."""
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError, struct.error) as exc:
        raise SubmissionProblem(f"{label}: cannot read {info.filename} (zipfile says: {exc})") from None
    if len(data) != info.file_size or len(data) > limit:
        raise SubmissionProblem(f"{label}: {info.filename} holds {len(data):,} bytes, "
                                f"not the {info.file_size:,} it declares")
    return data


def notebook(entry: Entry, stubs: dict[str, notebooks.Stub]) -> notebooks.Extraction:
    """A notebook submission read into exercise files (``grader.core.notebooks``: parsed,
    never run), with the cell each function came from. Raises ``SubmissionProblem``
    when it cannot be read or defines no drill's function."""
    if entry.problem is not None:
        raise SubmissionProblem(entry.problem)
    if entry.notebook is None:
        raise SubmissionProblem(f"{entry.label} holds no notebook")
    name = PurePosixPath(entry.notebook).name
    try:
        data = _notebook_bytes(entry)
        extraction = notebooks.extract(name, data, stubs)
    except notebooks.NotebookProblem as exc:
        raise SubmissionProblem(f"{entry.label}: {exc}") from None
    except OSError as exc:
        raise SubmissionProblem(f"{entry.label} cannot be read: {exc}") from None
    if not extraction.files:
        raise SubmissionProblem(f"{entry.label}: no cell of {name} defines a drill's function, "
                                "so there is nothing to grade")
    return extraction


def _notebook_bytes(entry: Entry) -> bytes:
    assert entry.notebook is not None
    if entry.kind == "notebook":
        return notebooks.read_bytes(entry.source)
    if entry.kind == "folder":
        return notebooks.read_bytes(entry.source.joinpath(*entry.notebook.split("/")))
    with _open_zip(entry) as zf:
        members = {m.path: m for m in _zip_listing(entry, zf).members}
        member = members.get(entry.notebook)
        if member is None or member.info is None:
            raise SubmissionProblem(f"{entry.label} no longer holds {entry.notebook}")
        if member.size > notebooks.MAX_NOTEBOOK_BYTES:
            raise SubmissionProblem(f"{entry.label}: {entry.notebook} is {mib(member.size)} "
                                    f"(at most {mib(notebooks.MAX_NOTEBOOK_BYTES)})")
        _check_member(entry.label, member.info)
        return _read_member(entry.label, zf, member.info, notebooks.MAX_NOTEBOOK_BYTES)


def _nonempty(entry: Entry, out: dict[str, bytes]) -> dict[str, bytes]:
    if not out:
        raise SubmissionProblem(f"{entry.label} has no .py file left to grade")
    return out


# ------------------------------------------------------------------ hashing and packing

def content_hash(files: dict[str, bytes]) -> str:
    """sha256 (hex) of the files' paths and bytes, in path order: the same content
    hashes the same whether it came as a folder or a zip, at any accepted depth.
    Every path and content is length-prefixed, so no two file sets share a hash
    by moving bytes between a name and a content."""
    digest = hashlib.sha256(b"torchdrill-submission-1\n")
    for path in sorted(files):
        name = path.encode("utf-8")
        digest.update(b"%d:%s%d:" % (len(name), name, len(files[path])))
        digest.update(files[path])
    return digest.hexdigest()


def pack(files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` that depends on their content only (sorted, fixed times and
    modes, stored: the bytes do not depend on the zlib build either), for a grading
    process that ``unpack``s it. Raises ``ValueError`` for a path or size that
    ``unpack`` would refuse."""
    _check_packable(files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=PACK_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = 3  # unix: the mode below is read as one
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, files[path])
    return buffer.getvalue()


def _check_packable(files: dict[str, bytes]) -> None:
    if len(files) > MAX_MEMBERS:
        raise ValueError(f"{len(files):,} files (at most {MAX_MEMBERS:,})")
    for path, data in files.items():
        reason = path_problem(path)
        if reason:
            raise ValueError(f"cannot pack {path!r}: {reason}")
        if len(data) > MAX_SOURCE_BYTES:
            raise ValueError(f"cannot pack {path}: {mib(len(data))} (at most {mib(MAX_SOURCE_BYTES)})")
    total = sum(len(d) for d in files.values())
    if total > MAX_SUBMISSION_BYTES:
        raise ValueError(f"{mib(total)} of files (at most {mib(MAX_SUBMISSION_BYTES)})")


def unpack(data: bytes, dest: Path) -> None:
    """Extract a ``pack``ed submission into ``dest`` (which must not exist, or be an
    empty folder): files 0644, folders 0755. Everything is checked before anything
    is written: the caps of ``discover``, normalized relative ``.py`` paths only,
    no link, folder, duplicate or encrypted member. Raises ``SubmissionProblem``
    for an archive it refuses, ``FileExistsError`` for a ``dest`` with files."""
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise FileExistsError(f"cannot unpack into {dest}: it exists and is not an empty folder")
    label = "the packed submission"
    if len(data) >= _EOCD.size:
        _check_directory(label, io.BytesIO(data))
    with _zipfile(label, io.BytesIO(data)) as zf:
        infos = _checked_pack(label, zf.infolist())
        created = not dest.exists()
        try:
            _extract(label, zf, infos, dest)
        except BaseException:
            _clear(dest, remove=created)  # no half-unpacked submission is ever graded
            raise


def _clear(dest: Path, remove: bool) -> None:
    if remove:
        remove_tree(dest)
        return
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            remove_tree(child)
        else:
            child.unlink(missing_ok=True)


def _checked_pack(label: str, infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    if len(infos) > MAX_MEMBERS:
        raise SubmissionProblem(f"{label} has {len(infos):,} members (at most {MAX_MEMBERS:,})")
    total = 0
    names: set[str] = set()
    for info in infos:
        reason = path_problem(info.filename)
        if reason:
            raise SubmissionProblem(f"{label} has a member named {info.filename!r}: {reason}")
        if info.flag_bits & 0x1:
            raise SubmissionProblem(f"{label}: {info.filename} is encrypted")
        kind = stat.S_IFMT(info.external_attr >> 16)  # 0 when the writer kept no file type
        if kind and kind != stat.S_IFREG:
            raise SubmissionProblem(f"{label}: {info.filename} is not a regular file (a link or folder)")
        if info.filename in names:
            raise SubmissionProblem(f"{label} holds {info.filename} twice")
        names.add(info.filename)
        if info.file_size > MAX_SOURCE_BYTES:
            raise SubmissionProblem(f"{label}: {info.filename} is {mib(info.file_size)} "
                                    f"(at most {mib(MAX_SOURCE_BYTES)})")
        _check_member(label, info)
        total += info.file_size
    if total > MAX_SUBMISSION_BYTES:
        raise SubmissionProblem(f"{label} unpacks to {mib(total)} (at most {mib(MAX_SUBMISSION_BYTES)})")
    folders = {str(p) for name in names for p in PurePosixPath(name).parents}
    clash = sorted(names & folders)
    if clash:
        raise SubmissionProblem(f"{label} has {clash[0]} both as a file and as a folder")
    return sorted(infos, key=lambda i: i.filename)


def _extract(label: str, zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    os.chmod(dest, 0o755)
    for info in infos:
        data = _read_member(label, zf, info)
        target = dest.joinpath(*info.filename.split("/"))
        folder = dest
        for part in info.filename.split("/")[:-1]:
            folder = folder / part
            if not folder.is_dir():
                folder.mkdir()
                os.chmod(folder, 0o755)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o644)
            f.write(data)
