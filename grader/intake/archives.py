"""Zips read without trusting them, and submissions packed to travel.

A zip's member count and central directory size are checked from its end record
before ``zipfile`` parses the directory; absolute or ``..`` member names (zip-slip)
and encrypted members refuse the whole zip; a member that will be read must be
stored or deflated (bzip2 and lzma decompress without an output bound), expand at
most ``MAX_RATIO`` times, and is read with a cap whatever its header declares.
Members that are not read are never decompressed.

``pack`` turns a submission's files into a zip that depends on their content only,
``unpack`` writes one out again after checking everything first, and
``content_hash`` names the content (resumable class grading skips what it has
graded already).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from grader.core.files import remove_tree, zip_member
from grader.core.i18n import _
from grader.core.sources import (
    IGNORED_NAMES,
    MAX_FILES,
    MAX_SOURCE_BYTES,
    MAX_SUBMISSION_BYTES,
    Listing,
    Member,
    SourceProblem,
    mib,
    parts,
    path_problem,
    unsafe_name,
)

MAX_MEMBERS = MAX_FILES  # zip members (a zipped handout with its .venv stays under it)
MAX_DIRECTORY_BYTES = 32 * 2**20  # a zip's central directory, checked before it is parsed
MAX_RATIO = 100  # uncompressed / compressed size of a member that is read...
RATIO_FLOOR_BYTES = 64 * 2**10  # ...once it is this big (a tiny file proves nothing)
READ_COMPRESSION = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}

# A zip (or an entry) that cannot be graded or became unreadable; one sentence naming it.
SubmissionProblem = SourceProblem


# ------------------------------------------------------------------ reading a zip

@contextlib.contextmanager
def open_zip(path: Path, label: str) -> Iterator[zipfile.ZipFile]:
    """The zip at ``path`` (named ``label`` in problems), opened (never through a link, never blocking on a pipe) only once its
    end record shows a directory within the caps."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise SubmissionProblem(_("{label} cannot be read: {error}", label=label, error=exc)) from None
    with os.fdopen(fd, "rb") as fp:
        if not stat.S_ISREG(os.fstat(fp.fileno()).st_mode):
            raise SubmissionProblem(_("{label} is not a regular file", label=label))
        check_directory(label, fp)
        with _zipfile(label, fp) as zf:
            yield zf


def _zipfile(label: str, fp: BinaryIO) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, struct.error, UnicodeDecodeError) as exc:
        raise SubmissionProblem(_("{label} is not a readable zip file (zipfile says: {error})", label=label,
                                  error=exc or type(exc).__name__)) from None


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
    signature, _disk, offset, _disks = _ZIP64_LOCATOR.unpack_from(tail, locator)
    if signature != b"PK\x06\x07" or offset + _ZIP64_EOCD.size > size:
        return None
    fp.seek(offset)
    record = fp.read(_ZIP64_EOCD.size)
    if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
        return None
    fields = _ZIP64_EOCD.unpack(record)
    return fields[6], fields[7]


def check_directory(label: str, fp: BinaryIO) -> None:
    found = _directory_size(fp)
    fp.seek(0)
    if found is None:
        return
    count, directory = found
    if count > MAX_MEMBERS:
        raise SubmissionProblem(_("{label} has {count} members (at most {limit}): hand in the exercises only",
                                  label=label, count=f"{count:,}", limit=f"{MAX_MEMBERS:,}"))
    if directory > MAX_DIRECTORY_BYTES:
        raise SubmissionProblem(_("{label} has a {size} member directory (at most {limit}): hand in the "
                                  "exercises only", label=label, size=mib(directory),
                                  limit=mib(MAX_DIRECTORY_BYTES)))


def zip_listing(label: str, zf: zipfile.ZipFile) -> Listing:
    """The members of ``zf`` that a submission may hold (dot names, links and folders
    left out), refusing unsafe names, encryption and duplicates."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise SubmissionProblem(_("{label} has {count} members (at most {limit}): hand in the exercises only",
                                  label=label, count=f"{len(infos):,}", limit=f"{MAX_MEMBERS:,}"))
    listing = Listing([])
    seen: set[str] = set()
    for info in infos:
        unsafe = unsafe_name(info.filename)
        if unsafe:
            raise SubmissionProblem(_("{label} has a member named {name}, {unsafe}: a zip like that could "
                                      "write outside its folder (zip-slip); re-zip the exercises with "
                                      "relative paths", label=label, name=repr(info.filename), unsafe=unsafe))
        if info.flag_bits & 0x1:
            raise SubmissionProblem(_("{label} is encrypted (member {name} needs a password): hand in a zip "
                                      "without a password", label=label, name=repr(info.filename)))
        names = parts(info.filename)
        if info.is_dir() or not names or any(p.startswith(".") for p in names) \
                or names[0] in IGNORED_NAMES:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            listing.links += 1
            continue
        path = "/".join(names)
        if path in seen:
            raise SubmissionProblem(_("{label} holds two members named {path}: re-zip it so that each file "
                                      "is there once", label=label, path=path))
        seen.add(path)
        listing.members.append(Member(path, info.file_size, info))
    return listing


def check_member(label: str, info: zipfile.ZipInfo) -> None:
    """A member about to be read: a compression with bounded output, a sane ratio."""
    if info.compress_type not in READ_COMPRESSION:
        # compressor_names: zipfile's own table of method names, left out of typeshed's stubs
        method = zipfile.compressor_names.get(info.compress_type, f"method {info.compress_type}")  # type: ignore[attr-defined]
        raise SubmissionProblem(_("{label}: {name} is compressed with {method}; only stored or deflated "
                                  "members are read (zip it with a standard zip tool)", label=label,
                                  name=info.filename, method=method))
    if info.file_size >= RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        raise SubmissionProblem(_("{label}: {name} expands {ratio} times (at most {limit}): that is a zip "
                                  "bomb, not source code", label=label, name=info.filename,
                                  ratio=f"{ratio:,.0f}", limit=MAX_RATIO))


def read_member(label: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo,
                 limit: int = MAX_SOURCE_BYTES) -> bytes:
    """A member's bytes, never more than it declares (``zipfile`` stops there and
    checks the CRC) nor more than the cap."""
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError, struct.error) as exc:
        raise SubmissionProblem(_("{label}: cannot read {name} (zipfile says: {error})", label=label,
                                  name=info.filename, error=exc)) from None
    if len(data) != info.file_size or len(data) > limit:
        raise SubmissionProblem(_("{label}: {name} holds {size} bytes, not the {declared} it declares",
                                  label=label, name=info.filename, size=f"{len(data):,}",
                                  declared=f"{info.file_size:,}"))
    return data


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
            zf.writestr(zip_member(path, compress_type=zipfile.ZIP_STORED), files[path])
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
        check_directory(label, io.BytesIO(data))
    with _zipfile(label, io.BytesIO(data)) as zf:
        infos = _checked_pack(label, zf.infolist())
        created = not dest.exists()
        try:
            _extract(label, zf, infos, dest)
        except BaseException:
            _clear(dest, remove=created)  # no half-unpacked submission is ever graded
            raise


def unpacked(data: bytes) -> dict[str, bytes]:
    """The files of a ``pack``ed submission, every check ``unpack`` makes, nothing
    written. Raises ``SubmissionProblem`` for an archive it refuses."""
    label = "the packed submission"
    if len(data) >= _EOCD.size:
        check_directory(label, io.BytesIO(data))
    with _zipfile(label, io.BytesIO(data)) as zf:
        return {info.filename: read_member(label, zf, info) for info in _checked_pack(label, zf.infolist())}


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
        check_member(label, info)
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
        data = read_member(label, zf, info)
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
