"""Files the grader writes, and trees it removes: a crash never leaves half a file, a
tree left by untrusted code never stops a clean-up, and an archive's bytes depend on
its files alone."""

from __future__ import annotations

import itertools
import os
import stat
import tempfile
import zipfile
from pathlib import Path

MAX_OPEN_DEPTH = 64  # folders held open at once while removing a tree (deeper ones move up)
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the zip format's earliest date: archives that do not depend on clocks


def zip_member(name: str, mode: int = 0o644, compress_type: int = zipfile.ZIP_DEFLATED) -> zipfile.ZipInfo:
    """A zip member whose header depends only on its name, mode and compression (no
    clock, no host), so the same files always make the same archive."""
    info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
    info.compress_type = compress_type
    info.create_system = 3  # unix: the mode below is read as one
    info.external_attr = (stat.S_IFREG | mode) << 16
    return info


def write_atomically(path: Path, text: str, newline: str | None = None) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a
    rename: a reader (or a rerun after ``kill -9``) sees the old file or the new one,
    never a part. The file is readable by all (0644): reports and exports are for
    reading. ``newline`` is as for ``open`` (``""`` keeps CSV's own line ends)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def remove_tree(path: Path | str) -> int:
    """Remove ``path`` and everything under it without following a link, and never
    raise; return how many entries could not be removed (0: all gone).

    Meant for trees that untrusted code filled (a worker's private tmp, an unpacked
    submission): ``shutil.rmtree`` recurses and raised ``RecursionError`` on a tree
    thousands of folders deep, even with ``ignore_errors``. This walks with a stack of
    folder descriptors (every name is resolved relative to its folder, so no path is
    too long) and moves a folder found deeper than ``MAX_OPEN_DEPTH`` up to the top of
    the tree, to be emptied later, so it holds a bounded number of descriptors open.
    """
    path = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return _unlink(path, None)
        top = os.open(path, _DIR_FLAGS)
    except OSError:
        return 0 if not os.path.lexists(path) else 1
    left, serial = 0, itertools.count()
    try:
        pending: list[str] = []  # folders moved up under ``top``, to empty in turn
        left += _empty(top, top, pending, serial)
        while pending:
            name = pending.pop()
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=top)
            except OSError:
                left += _unlink(name, top)
                continue
            left += _empty(fd, top, pending, serial) + _rmdir(name, top)
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        left += 1
    return left


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _empty(fd: int, top: int, pending: list[str], serial: itertools.count) -> int:
    """Remove everything in the open folder ``fd`` (closed when done, unless it is
    ``top``); folders deeper than ``MAX_OPEN_DEPTH`` below it move under ``top``."""
    left = 0
    stack: list[tuple[int, list[str], str]] = [(fd, _names(fd), "")]  # (fd, names left, own name)
    while stack:
        here, names, own = stack[-1]
        if not names:
            stack.pop()
            if here != top:
                os.close(here)
            if stack:
                left += _rmdir(own, stack[-1][0])
            continue
        child = names.pop()
        try:
            is_dir = stat.S_ISDIR(os.lstat(child, dir_fd=here).st_mode)
        except OSError:
            continue
        if not is_dir:
            left += _unlink(child, here)
        elif len(stack) >= MAX_OPEN_DEPTH:
            moved = f".removing-{next(serial)}"
            try:
                os.rename(child, moved, src_dir_fd=here, dst_dir_fd=top)
                pending.append(moved)
            except OSError:
                left += 1
        else:
            try:
                stack.append((os.open(child, _DIR_FLAGS, dir_fd=here), [], child))
                stack[-1][1].extend(_names(stack[-1][0]))
            except OSError:
                left += 1
    return left


def _names(fd: int) -> list[str]:
    try:
        with os.scandir(fd) as entries:
            return [e.name for e in entries]
    except OSError:
        return []


def _unlink(name: str, dir_fd: int | None) -> int:
    try:
        os.unlink(name, dir_fd=dir_fd)
        return 0
    except FileNotFoundError:
        return 0
    except OSError:
        return 1


def _rmdir(name: str, dir_fd: int) -> int:
    try:
        os.rmdir(name, dir_fd=dir_fd)
        return 0
    except FileNotFoundError:
        return 0
    except OSError:
        return 1
