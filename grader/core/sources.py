"""Which files of a submission are graded, and how they are read: one rule for all.

A submission's sources are its regular ``.py`` files under its folder: no hidden
file or folder, no symbolic link (never followed, wherever it points), no FIFO,
socket or device, a name that a module can have, at most ``MAX_SOURCE_BYTES`` each
(a larger one is skipped: a 1 MiB drill file is not a drill file) and
``MAX_SUBMISSION_BYTES`` in all. The sandbox copies exactly these
(``grader.sandbox.sandboxes.copy_sources``) and class grading reads, hashes and packs
exactly these (``grader.intake``), from a folder or a zip alike.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from grader.core.errors import NotGradable

MAX_SOURCE_BYTES = 1 * 2**20  # per .py file; a larger one is skipped
MAX_SUBMISSION_BYTES = 16 * 2**20  # all the .py files of one submission
MAX_FILES = 50_000  # files (or zip members) of one submission's folder, before any is read
IGNORED_NAMES = frozenset({"__MACOSX"})  # macOS zips' resource forks, never sources

_DRIVE = re.compile(r"^[A-Za-z]:")


class SourceProblem(NotGradable):
    """A submission's sources cannot be read as graded; one sentence naming the file."""


@dataclass(frozen=True)
class Member:
    """A regular file of a submission: its normalized relative path and (declared) size."""

    path: str
    size: int
    info: Any = None  # a ``zipfile.ZipInfo`` for zip members


@dataclass
class Listing:
    members: list[Member] = field(default_factory=list)
    links: int = 0  # symbolic links ignored


def parts(name: str) -> list[str]:
    """A path's parts (``\\`` is a separator too: some Windows tools write it)."""
    return [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]


def unsafe_name(name: str) -> str | None:
    """Why a relative name could escape the folder it is written into, or None."""
    posix = name.replace("\\", "/")
    if posix.startswith("/"):
        return "an absolute path"
    if _DRIVE.match(posix):
        return "a path on a drive"
    if ".." in posix.split("/"):
        return "a path through '..'"
    return None


def path_problem(path: str) -> str | None:
    """Why ``path`` (posix, relative) cannot be a graded source file, or None."""
    unsafe = unsafe_name(path)
    if unsafe:
        return unsafe
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "a name that is not UTF-8"
    if "\\" in path or "\0" in path:
        return "a backslash or NUL in the path"
    if "/".join(parts(path)) != path:
        return "not a normalized relative path"
    if any(p.startswith(".") for p in path.split("/")):
        return "a hidden file or folder"
    if not path.endswith(".py"):
        return "not a .py file"
    return None


def walk(folder: Path, label: str) -> Listing:
    """The regular files under ``folder``, walked without following links (hidden
    folders and ``__MACOSX`` are not entered); raises ``SourceProblem`` when ``folder``
    is itself a link or holds more than ``MAX_FILES`` files."""
    if folder.is_symlink():
        raise SourceProblem(f"{label} is a symbolic link")
    listing = Listing()

    def fail(exc: OSError) -> None:
        raise exc

    for here, dirs, names in os.walk(folder, onerror=fail, followlinks=False):
        base = Path(here)
        rel = base.relative_to(folder).as_posix()
        prefix = "" if rel == "." else rel + "/"
        for d in list(dirs):
            if (base / d).is_symlink():
                listing.links += 1
            if d.startswith(".") or d in IGNORED_NAMES or (base / d).is_symlink():
                dirs.remove(d)
        for name in names:
            if name.startswith("."):
                continue
            info = os.lstat(base / name)
            if stat.S_ISLNK(info.st_mode):
                listing.links += 1
            elif stat.S_ISREG(info.st_mode):
                listing.members.append(Member(prefix + name, info.st_size))
                if len(listing.members) > MAX_FILES:
                    raise SourceProblem(f"{label} holds more than {MAX_FILES:,} files: "
                                        "hand in the exercises only")
    return listing


@dataclass
class Selection:
    chosen: list[tuple[str, Member]]  # (path under the root, member), in path order
    oversized: list[str]  # members skipped for their size
    total: int  # bytes chosen


def select(members: Iterable[Member], under: str = "") -> Selection:
    """The members that are graded sources, keyed by their path under ``under``:
    the rule of the module docstring, sizes as listed (nothing is read here)."""
    chosen: list[tuple[str, Member]] = []
    oversized: list[str] = []
    total = 0
    for member in sorted(members, key=lambda m: m.path):
        rel = under_root(under, member.path)
        if rel is None or path_problem(rel):
            continue
        if member.size > MAX_SOURCE_BYTES:
            oversized.append(member.path)
            continue
        total += member.size
        chosen.append((rel, member))
    return Selection(chosen, oversized, total)


def read(path: Path | str, limit: int = MAX_SOURCE_BYTES) -> bytes | None:
    """The bytes of the regular file ``path``, opened without following a link and
    without blocking (a FIFO or a device is never read); None when it is not a
    regular file or is over ``limit`` bytes. Raises ``OSError`` when it cannot be
    opened (a link: ``ELOOP``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(limit + 1)
    return data if len(data) <= limit else None


def mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def under_root(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` (posix), or None when it is not under it."""
    if not root:
        return path
    return path[len(root) + 1:] if path.startswith(root + "/") else None


def folders_clash(paths: Iterable[str]) -> str | None:
    """A path that is both a file and a folder of the others, or None."""
    paths = list(paths)
    folders = {str(p) for rel in paths for p in PurePosixPath(rel).parents}
    return next((rel for rel in paths if rel in folders), None)
