"""The files a release writes for the student rather than copies: ``tox.ini`` with the
environments a handout can run, ``pyproject.toml`` whose bare ``pytest`` runs the
drills' public tests and ``README.md`` (``grader/authoring/templates/student_README.md.j2``).
``course.toml`` in the handout's language is ``grader.core.syllabus.with_language``'s
(the Gradescope zip's too).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from grader.core import drill_texts, syllabus
from grader.core.errors import UsageError

README_TEMPLATE = Path(__file__).parent / "templates" / "student_README.md.j2"
# An environment whose commands name one of them cannot run there:
# what an environment needs that a handout lacks: the reference, the engine's tests, the docs
# site's sources, the message catalogs' extraction (the course author's job)
NOT_IN_A_HANDOUT = re.compile(r"\breference\b|grader/tests|\bdocs\b|\bsphinx-build\b|grader/locale/update\.sh")


class ReleaseError(UsageError):
    """The handout cannot be made, or would leak; one clear sentence (or a list of leaks)."""


def student_pyproject(path: Path) -> None:
    """In a handout, a bare ``pytest`` runs the drills' public tests (grader/tests is not there)."""
    if path.is_file():
        text = re.sub(r'^testpaths = .*$', 'testpaths = ["tests"]', path.read_text(encoding="utf-8"),
                      flags=re.MULTILINE)
        path.write_text(text, encoding="utf-8")


def student_tox_ini(path: Path) -> str:
    """The course's tox.ini without the environments that need what a handout lacks
    (the reference, the engine's tests, the docs site's sources: ``NOT_IN_A_HANDOUT``):
    in practice, ``grade`` and its base."""
    parser = _CaseConfigParser(interpolation=None, default_section="\0none")
    parser.read(path, encoding="utf-8")
    envs = [s for s in parser.sections() if s.startswith("testenv:")
            and not NOT_IN_A_HANDOUT.search(parser[s].get("commands", ""))]
    if "testenv:grade" not in envs:
        raise ReleaseError(f"{path} has no [testenv:grade] a handout can run")
    lines = ["# Written by `torchdrill release` from the course's tox.ini: the environments a",
             "# handout can run (no reference solutions, engine tests or docs sources here).", ""]
    tox = dict(parser["tox"]) if parser.has_section("tox") else {}
    tox["envlist"] = ", ".join(s.removeprefix("testenv:") for s in envs)
    lines += _ini_section("tox", tox)
    if parser.has_section("testenv"):
        base_needs_secrets = bool(NOT_IN_A_HANDOUT.search(parser["testenv"].get("commands", "")))
        base = {k: v for k, v in parser["testenv"].items()
                if not (base_needs_secrets and k in ("commands", "description"))}
        lines += _ini_section("testenv", base)
    for name in envs:
        lines += _ini_section(name, dict(parser[name]))
    return "\n".join(lines).rstrip() + "\n"


class _CaseConfigParser(configparser.ConfigParser):
    def optionxform(self, optionstr: str) -> str:
        return optionstr  # keep option names as written


def _ini_section(name: str, options: dict[str, str]) -> list[str]:
    out = [f"[{name}]"]
    for key, value in options.items():
        parts = value.split("\n")
        out.append(f"{key} = {parts[0]}".rstrip())
        out += [f"    {p.strip()}" for p in parts[1:] if p.strip()]
    return out + [""]


def student_readme(root: Path, course: syllabus.Course, public: dict[str, list[str]],
                   notebooks: bool = False, lang: str = "en") -> str:
    """README.md of a handout in ``lang``, from ``grader/authoring/templates/student_README.md.j2``
    (``student_README.<lang>.md.j2`` for another language): the course's, topics' and
    drills' titles in that language where the course has them."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(README_TEMPLATE.parent)),
                             autoescape=False, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["number"] = lambda x: "?" if x is None else f"{x:g}"
    topics: list[dict[str, Any]] = [{"title": drill_texts.topic_title(course, lang, t.name),
                                     "drills": [_drill_row(root, d, public, lang) for d in t.drills]}
                                    for t in course.topics]
    total = sum(d["points"] or 0 for t in topics for d in t["drills"])
    first = course.drills[0] if course.drills else None
    template = README_TEMPLATE.name if lang == "en" else README_TEMPLATE.name.replace(".md.j2", f".{lang}.md.j2")
    languages = sorted(p.name for p in (root / drill_texts.LOCALES).glob("*") if p.is_dir())
    return env.get_template(template).render(
        title=drill_texts.course_title(course, lang), topics=topics, total=total, notebooks=notebooks,
        languages=languages, first=first.name if first else "NAME", first_id=first.id if first else "topic/NAME")


def _drill_row(root: Path, drill: syllabus.Drill, public: dict[str, list[str]], lang: str) -> dict[str, Any]:
    facts = syllabus.drill_facts(root, drill.id)
    title = (drill_texts.title(root, lang, drill.id) if lang != "en" else None) or facts["title"]
    return {"id": drill.id, "name": drill.name, "points": facts["points"], "title": title,
            "hints": len(drill.hints), "public": len(public.get(drill.id, []))}
