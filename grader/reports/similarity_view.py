"""The similarity evidence as people read it: the class report's section and ``similarity.csv``.

Made from the plain data ``grader.classroom.similarity.analyse`` returns. Code from
submissions is escaped here (``marked``) before it becomes markup: each matched region
is wrapped in ``<mark>``, everything else is text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from grader.core import i18n
from grader.core.files import write_atomically
from grader.reports import present

CSV_NAME = "similarity.csv"
CSV_FIELDS = ("drill", "evidence", "student_a", "student_b", "score", "flagged", "detail")


def marked(code: str, spans: list[list[int]]) -> Markup:
    """``code`` escaped, with each ``[start, end)`` span in ``<mark>``."""
    out, at = [], 0
    for start, end in sorted((max(0, s), min(len(code), e)) for s, e in spans):
        if start < at or start >= end:
            continue
        out += [str(escape(code[at:start])), "<mark>", str(escape(code[start:end])), "</mark>"]
        at = end
    out.append(str(escape(code[at:])))
    return Markup("".join(out))


def skipped_lines(similarity: dict[str, Any] | None, t: i18n.Translator | None = None) -> list[str]:
    """One line per file the code evidence left out for its size
    (``grader.classroom.similarity.bounded_files``), naming the student and the file, in
    ``t``'s language (the running command's by default). A size is in KiB and exactly, in
    bytes (65,537 bytes is 64 KiB to a decimal, and over the bound)."""
    t = present.words(t)
    lines = []
    for item in (similarity or {}).get("skipped") or []:
        words = dict(student=item["student"], file=item["file"], size=f"{present.kib(item['bytes'])} ({item['bytes']:,} B)",
                     limit=present.kib(item["limit"]))
        lines.append(t.gettext("{student}: {file} not compared: {size}, over the bound of {limit} per file", **words)
                     if item["bound"] == "file" else
                     t.gettext("{student}: {file} not compared: {size}, and the student's files together are over "
                               "the bound of {limit} per submission (the largest are left out first)", **words))
    return lines


def view(similarity: dict[str, Any] | None, order: Sequence[str] = (),
         t: i18n.Translator | None = None) -> dict[str, Any] | None:
    """What the class report's template shows: per drill (flagged first, then in course
    ``order``), the code pairs with both files marked, the behaviour pairs and the common
    wrong answers; and the files left out for their size (``skipped``, in ``t``'s language)."""
    if not similarity:
        return None
    code = similarity.get("code") or {}
    behaviour = similarity.get("behaviour") or {}
    drills = []
    for drill in sorted(set(code) | set(behaviour)):
        c, b = code.get(drill) or {}, behaviour.get(drill) or {}
        pairs = []
        for p in c.get("top", []):
            pairs.append({**p, "a_html": marked(p.get("a_code", ""), p.get("a_spans", [])),
                          "b_html": marked(p.get("b_code", ""), p.get("b_spans", []))})
        shown_flagged = sum(1 for p in pairs if p.get("flagged"))
        drills.append({"id": drill, "students": c.get("students", 0), "pairs_compared": c.get("pairs", 0),
                       "more_flagged": c.get("flagged", 0) - shown_flagged,
                       "median": c.get("median"), "flagged": c.get("flagged", 0), "code_pairs": pairs,
                       "behaviour_pairs": b.get("pairs", []), "behaviour_total": b.get("pairs_total", 0),
                       "rare_limit": b.get("rare_limit"), "common": b.get("common", []),
                       "behaviour_flagged": sum(1 for p in b.get("pairs", []) if p["shared"] >= 2)})
    where = {eid: k for k, eid in enumerate(order)}
    drills.sort(key=lambda d: (-(d["flagged"] + d["behaviour_flagged"]), where.get(d["id"], len(where)),
                               d["id"]))
    return {"settings": similarity.get("settings") or {}, "drills": drills, "skipped": skipped_lines(similarity, t),
            "flagged": sum(d["flagged"] for d in drills),
            "behaviour_flagged": sum(d["behaviour_flagged"] for d in drills)}


def csv_rows(similarity: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per pair the report shows, code and behaviour alike, flagged first."""
    rows = []
    for drill, found in sorted((similarity.get("code") or {}).items()):
        for p in found.get("listed", found.get("top", [])):
            rows.append({"drill": drill, "evidence": "code", "student_a": p["a"], "student_b": p["b"],
                         "score": p["score"], "flagged": "yes" if p["flagged"] else "no",
                         "detail": f"{p['a_share']:.0%} of {p['a']}'s code and {p['b_share']:.0%} of "
                                   f"{p['b']}'s match ({p['matched']} filtered characters"
                                   + (f", {p['dictated']:.0%} of them dictated by the docstring" if p.get("dictated")
                                      else "") + ")"})
    for drill, found in sorted((similarity.get("behaviour") or {}).items()):
        for p in found.get("pairs", []):
            tests = sorted({a["test"] for a in p["answers"]})
            rows.append({"drill": drill, "evidence": "behaviour", "student_a": p["a"], "student_b": p["b"],
                         "score": p["shared"], "flagged": "yes" if p["shared"] >= 2 else "no",
                         "detail": f"{p['shared']} rare wrong {'answer' if p['shared'] == 1 else 'answers'} "
                                   f"in common: {', '.join(tests)}"})
    rows.sort(key=lambda r: (r["flagged"] != "yes", r["drill"], r["evidence"], -float(r["score"])))
    return rows


def write_csv(similarity: dict[str, Any], path: Path) -> Path:
    """``similarity.csv`` (atomically); returns its path."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\r\n")
    writer.writeheader()
    for row in csv_rows(similarity):
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return write_atomically(path, buffer.getvalue(), newline="")


def _cell(value: Any) -> Any:
    """A cell a spreadsheet will not run as a formula (ids and test names are data)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
