"""What a drill's author accepted from its audit, with the reason: ``audit/<topic>/<name>.toml``.

```toml
[[accepted]]
kind = "mutant"                      # mutant, route or do-nothing
id = "dropped call@18:29#1"          # as the audit prints it
reason = "under no_grad the output has no graph: detach() changes nothing"
```

A survivor that is equivalent to the reference, or a route the spec allows, is
written here and shown as accepted; anything else the audit finds fails it. The
file lives with the course, outside ``tests/``, so a release never hands it out.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader.core.errors import UsageError
from grader.core.i18n import _

FOLDER = "audit"
KINDS = ("mutant", "route", "do-nothing")


@dataclass(frozen=True)
class Acceptance:
    kind: str
    id: str
    reason: str


def path_for(course: Path, drill: str) -> Path:
    return course / FOLDER / f"{drill}.toml"


def read(course: Path, drill: str) -> dict[tuple[str, str], Acceptance]:
    """The drill's acceptances by (kind, id); none when it has no file. A malformed
    file is an error naming the file and the entry."""
    path = path_for(course, drill)
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(_("{path}: not a TOML file: {error}", path=path, error=exc)) from None
    found: dict[tuple[str, str], Acceptance] = {}
    for i, entry in enumerate(data.get("accepted", [])):
        kind, id_, reason = entry.get("kind"), entry.get("id"), entry.get("reason")
        if kind not in KINDS or not isinstance(id_, str) or not isinstance(reason, str) or not reason.strip():
            raise UsageError(_("{path}: accepted entry {n} needs kind ({kinds}), id and a reason",
                               path=path, n=i + 1, kinds=", ".join(KINDS)))
        found[kind, id_] = Acceptance(kind, id_, reason.strip())
    return found
