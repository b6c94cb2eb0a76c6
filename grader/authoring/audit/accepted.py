"""What a drill's author accepted from its audit, with the reason: ``audit/<topic>/<name>.toml``.

```toml
[[accepted]]
kind = "mutant"                      # mutant or route
id = "dropped call@18:29#1"          # as the audit prints it
change = "`.detach()` dropped"       # a mutant's change, as the audit prints it
reason = "under no_grad the output has no graph: detach() changes nothing"
```

A survivor that is equivalent to the reference, or a route the spec allows, is
written here and shown as accepted; anything else the audit finds fails it. Only a
surviving mutant or an open route can be accepted: a do-nothing answer that scores
is always a hole, and a finding the audit could not grade is never an answer. A
mutant's id is its position in the reference, so the acceptance names its change
too: once an edit of the reference moves another mutant to that id, the acceptance
no longer applies. The file lives with the course, outside ``tests/``, so a release
never hands it out.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core.errors import UsageError
from grader.core.i18n import _

FOLDER = "audit"
KINDS = ("mutant", "route")
MIN_REASON = 20  # characters: a reason says why, not "ok"


@dataclass(frozen=True)
class Acceptance:
    kind: str
    id: str
    reason: str
    change: str = ""  # a mutant's description


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
    unknown = sorted(set(data) - {"accepted"})
    entries: Any = data.get("accepted", [])
    if unknown or not isinstance(entries, list):
        raise UsageError(_("{path}: expected only [[accepted]] entries, found {keys}", path=path,
                           keys=", ".join(unknown) or "accepted"))
    found: dict[tuple[str, str], Acceptance] = {}
    for i, entry in enumerate(entries):
        acceptance = _entry(path, i + 1, entry)
        if (acceptance.kind, acceptance.id) in found:
            raise UsageError(_("{path}: accepted entry {n} repeats {id}", path=path, n=i + 1, id=acceptance.id))
        found[acceptance.kind, acceptance.id] = acceptance
    return found


def _entry(path: Path, n: int, entry: Any) -> Acceptance:
    if not isinstance(entry, dict) or set(entry) - {"kind", "id", "change", "reason"}:
        raise UsageError(_("{path}: accepted entry {n} may hold only kind, id, change and reason", path=path, n=n))
    kind, id_, reason, change = entry.get("kind"), entry.get("id"), entry.get("reason"), entry.get("change", "")
    if (kind not in KINDS or not isinstance(id_, str) or not isinstance(reason, str)
            or len(reason.strip()) < MIN_REASON or not isinstance(change, str) or (kind == "mutant" and not change)):
        raise UsageError(_("{path}: accepted entry {n} needs kind ({kinds}), id, a mutant's change and a reason "
                           "of at least {chars} characters", path=path, n=n, kinds=", ".join(KINDS), chars=MIN_REASON))
    return Acceptance(kind, id_, reason.strip(), change)
