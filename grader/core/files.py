"""Writing files so that a crash never leaves half of one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
