"""``torchdrill stubs [--lang LANG]``: the docstrings of the learner's drill files in
``exercises/`` switched to one language, in place, whatever the files hold by now.

Only docstrings change (``grader.core.drill_texts.swap_docstrings``): every other byte
of a file stays as written, the code in the bodies, comments and line ends included,
and a file whose code would come out different in any way (compared on the parsed
files) is left as it is. Nothing is lost:

- A docstring is switched only when its text (cleaned as ``inspect.cleandoc`` cleans
  it) is one of the course's texts of that function: its translation in
  ``locales/<lang>/``, or its English as the course wrote it. A docstring the learner
  edited or wrote is kept as written, and the command says so. A renamed function
  whose docstring is still the course's is matched by its text.
- The English as the course wrote it is kept in ``exercises/.torchdrill-docstrings.json``
  (``grader.core.docstring_record``) before a file first leaves English, so that
  switching back always has it; a release writes that file into the handout. Where it
  has no entry for a drill, the English is the file's at git's ``HEAD`` (a clone), else
  the file's own docstrings. The same file keeps the translations last written into
  each file, which stay the course's texts after the course improves them.
- Each file is written through a temporary file and a rename, with its mode kept,
  and only if it is still what was read (a file saved meanwhile, by an editor or
  while ``watch`` runs, is left as saved); the file as it was goes to
  ``exercises/.torchdrill-backup/`` (``BACKUP_DIR``) first.
- A link, a file that does not parse, one that is not UTF-8 is left alone, and said.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import os
import stat
import subprocess
import tempfile
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from grader.core import docstring_record, drill_texts, i18n, sources
from grader.core.drill_texts import DrillTexts
from grader.core.errors import EXIT_OK, UsageError
from grader.core.i18n import N_, _
from grader.learner.place import Place, place

ENGLISH_FILE = docstring_record.ENGLISH_FILE
BACKUP_DIR = ".torchdrill-backup"
EXIT_NOT_ALL = 1  # some file could not be switched
GIT_TIMEOUT_S = 30.0
LANGUAGE_NAMES = {i18n.Lang.EN: N_("English"), i18n.Lang.ZH_CN: N_("Chinese")}

Texts = docstring_record.Texts  # qualified name ("" the module) -> docstring (compared once cleaned)


@dataclass(frozen=True)
class Switched:
    """One file's docstrings switched: the new source, and what was done to which
    docstring (qualified names, "" the module's)."""

    source: str
    switched: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # the course's functions whose docstring the learner edited: as written
    missing: tuple[str, ...] = ()  # the course's docstrings with no text in the language asked for


class NotSwitched(Exception):
    """Why a file is left as it is (a sentence in the command's language)."""


def texts_of(texts: DrillTexts) -> Texts:
    """A drill's translated docstrings, keyed as ``docstring_nodes`` names them."""
    found = dict(texts.docstrings)
    if texts.module is not None:
        found[""] = texts.module
    return found


def switch(source: str, known: Mapping[str, Texts], target: str) -> Switched:
    """``source`` with each of the course's docstrings in ``target``'s text.

    ``known``: the course's texts of this drill in each language it has them in. A
    docstring is the course's when its text is one of them (for its own name, else
    for exactly one other name of the same kind: a renamed function). Raises
    ``SyntaxError`` for a file that does not parse and ``NotSwitched`` where the
    result would differ from ``source`` in anything but docstrings."""
    tree = ast.parse(source)
    clean = {lang: {name: inspect.cleandoc(text) for name, text in texts.items()} for lang, texts in known.items()}
    wanted, written = clean.get(target, {}), known.get(target, {})  # written as the course wrote it, as a release does
    ours = {name for texts in clean.values() for name in texts}
    edits: dict[int, tuple[ast.Constant, str]] = {}  # the docstring's place in the file -> new text
    switched, kept, missing = [], [], []
    for at, (name, node) in enumerate(drill_texts.docstring_nodes(tree)):
        current = inspect.cleandoc(str(node.value))
        if wanted.get(name) == current:
            continue
        origin = _origin(name, current, clean)
        if origin is None:
            if name in ours:  # the course's function, its docstring the learner's
                kept.append(name)
            continue
        text = written.get(origin)
        if text is None:
            missing.append(name)
        elif inspect.cleandoc(text) != current:
            if not _one_literal(source, node):  # split, or commented inside: not rewritten
                kept.append(name)
                continue
            edits[at] = (node, text)
            switched.append(name)
    result = drill_texts.swap_docstrings(source, edits.values()) if edits else source
    if edits:
        _same_code(source, result, {i: text for i, (_node, text) in edits.items()})
    return Switched(result, tuple(switched), tuple(kept), tuple(missing))


def _origin(name: str, current: str, known: Mapping[str, Texts]) -> str | None:
    """The name whose text, in some language, ``current`` is: ``name`` itself, else the
    only other name (a module's for a module, a function's for a function) that has it."""
    if any(texts.get(name) == current for texts in known.values()):
        return name
    others = {other for texts in known.values() for other, text in texts.items()
              if text == current and (other == "") == (name == "")}
    return others.pop() if len(others) == 1 else None


def _one_literal(source: str, node: ast.Constant) -> bool:
    """Whether the docstring is written as one string literal (nothing between parts)."""
    segment = ast.get_source_segment(source, node) or ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    kinds = [t.type for t in tokens if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    return kinds == [tokenize.STRING]


def _same_code(before: str, after: str, texts: Mapping[int, str]) -> None:
    """Refuse a result that differs from ``before`` in anything but the docstrings at
    the places of ``texts``, or whose docstrings there do not read back as ``texts``."""
    old, new = ast.parse(before), ast.parse(after)
    old_docs, new_docs = drill_texts.docstring_nodes(old), drill_texts.docstring_nodes(new)
    expected = [inspect.cleandoc(texts[i]) if i in texts else inspect.cleandoc(str(node.value))
                for i, (_name, node) in enumerate(old_docs)]
    found = [inspect.cleandoc(str(node.value)) for _name, node in new_docs]
    for _name, node in old_docs + new_docs:
        node.value = ""
    if expected != found or ast.dump(old) != ast.dump(new):
        raise NotSwitched(_("switching would have changed more than its docstrings"))


# ------------------------------------------------------------------ the English as the course wrote it

def english_from(source: str, others: Iterable[Texts]) -> Texts:
    """The English docstrings of a drill file: its docstrings but those that are the
    course's text in another language."""
    try:
        found = drill_texts.docstrings(source)
    except SyntaxError:
        return {}
    theirs = [{name: inspect.cleandoc(text) for name, text in texts.items()} for texts in others]
    return {name: text for name, text in found.items() if not any(t.get(name) == text for t in theirs)}


def git_head(path: Path) -> str | None:
    """``path`` as git's ``HEAD`` has it, or None (no git, not a checkout, not in it)."""
    try:
        proc = subprocess.run(["git", "-C", str(path.parent), "show", f"HEAD:./{path.name}"],
                              capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    try:
        return proc.stdout.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


# ------------------------------------------------------------------ files

def _write_bytes(path: Path, data: bytes, mode: int) -> None:
    """``data`` to ``path`` through a temporary file beside it and a rename, with ``mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_if_unchanged(path: Path, before: bytes, after: bytes, mode: int) -> bool:
    """Write ``after`` to ``path`` if it still holds ``before`` (False, nothing written,
    when it was saved meanwhile or became a link)."""
    try:
        now = sources.read(path)
    except OSError:
        return False
    if now != before:
        return False
    _write_bytes(path, after, mode)
    return True


def read_source(path: Path) -> tuple[bytes, str, str]:
    """(the file's bytes, its text without a byte-order mark, that mark or "");
    ``NotSwitched`` for a link, a file that is not regular or too large, or one that is
    not UTF-8."""
    if path.is_symlink():
        raise NotSwitched(_("a symbolic link (switch the file it points to, or put a copy in its place)"))
    try:
        data = sources.read(path)
    except OSError as exc:
        raise NotSwitched(str(exc.strerror or exc)) from None
    if data is None:
        raise NotSwitched(_("not a regular file, or larger than {size}", size=sources.mib(sources.MAX_SOURCE_BYTES)))
    try:
        encoding, _lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "?"
    if encoding not in ("utf-8", "utf-8-sig"):
        raise NotSwitched(_("it declares the encoding {encoding}: save it as UTF-8 first", encoding=encoding))
    bom = "\ufeff" if data.startswith(b"\xef\xbb\xbf") else ""
    try:
        return data, data.decode("utf-8")[len(bom):], bom
    except UnicodeDecodeError:
        raise NotSwitched(_("not UTF-8 text")) from None


# ------------------------------------------------------------------ the command

@dataclass
class _Plan:
    drill: str
    path: Path
    before: bytes = b""
    after: bytes = b""
    mode: int = 0o644
    result: Switched | None = None
    problem: str | None = None
    seeded: Texts | None = None  # English learned here, for the record
    written: Texts | None = None  # the target language's texts, as the course has them now


KEPT = "{lang} as written before"  # known[] key: the texts last written into the file in {lang}


def _known(where: Place, drill: str, record: docstring_record.Record) -> dict[str, Texts]:
    """The course's texts of ``drill`` in each language: its translations now, the ones
    this folder's files were last given (the course may have improved them since), and
    the English kept."""
    known = {"en": record.get("en", {}).get(drill, {})}
    for lang in i18n.Lang:
        if lang is not i18n.Lang.EN:
            texts = drill_texts.load(where.root, lang.value, drill)
            if texts is not None:
                known[lang.value] = texts_of(texts)
            if drill in record.get(lang.value, {}):
                known[KEPT.format(lang=lang.value)] = record[lang.value][drill]
    return known


def _plan(where: Place, drill: str, record: docstring_record.Record, target: i18n.Lang) -> _Plan | None:
    path = where.exercise_file(drill)
    if not path.is_symlink() and not path.exists():
        return None  # no file of this drill: nothing to switch
    plan = _Plan(drill, path)
    try:
        if any(folder.is_symlink() for folder in path.parents if where.submission in folder.parents):
            raise NotSwitched(_("it is in a folder that is a symbolic link (graders do not follow it either)"))
        plan.before, source, bom = read_source(path)
        plan.mode = stat.S_IMODE(os.lstat(path).st_mode)
        known = _known(where, drill, record)
        if drill not in record.get("en", {}):
            others = [texts for lang, texts in known.items() if lang != "en"]
            head = git_head(path)
            plan.seeded = english_from(head, others) if head is not None else {}
            if not plan.seeded:
                plan.seeded = english_from(source, others)
            known["en"] = plan.seeded
        plan.result = switch(source, known, target.value)
        plan.after = (bom + plan.result.source).encode("utf-8")
        plan.written = known.get(target.value) if target is not i18n.Lang.EN else None
    except SyntaxError as exc:
        plan.problem = _("line {line}: {error}: fix it, then run this again", line=exc.lineno, error=exc.msg)
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte, nesting the parser gives up on
        plan.problem = _("it cannot be parsed: {error}", error=type(exc).__name__)
    except NotSwitched as exc:
        plan.problem = str(exc)
    return plan


def cmd_stubs(args: argparse.Namespace) -> int:
    where = place(args)
    target = i18n.Lang(args.lang)
    language = _(LANGUAGE_NAMES[target])
    record = docstring_record.read_all(where.submission)
    plans = [p for p in (_plan(where, d, record, target) for d in where.course.ids) if p is not None]
    writes = [p for p in plans if p.problem is None and p.before != p.after]
    if writes:  # the record first: if it cannot be kept, no file is switched
        english = {**record.get("en", {}), **{p.drill: p.seeded for p in plans if p.seeded}}
        written = {lang: dict(drills) for lang, drills in record.items() if lang != "en"}
        written.setdefault(target.value, {}).update({p.drill: p.written for p in writes if p.written})
        try:
            docstring_record.write(where.submission, english, written)
        except OSError as exc:
            raise UsageError(_("cannot write {path}: {error}", path=docstring_record.path_in(where.submission),
                               error=exc.strerror or exc)) from None
        for plan in writes:
            try:
                _write_bytes(where.submission / BACKUP_DIR / f"{plan.drill}.py", plan.before, 0o600)
                if not replace_if_unchanged(plan.path, plan.before, plan.after, plan.mode):
                    plan.problem = _("it changed while being switched; it is left as you saved it: run this again")
            except OSError as exc:
                plan.problem = str(exc.strerror or exc)
    for plan in plans:
        _say(where, plan, language)
    done = [p for p in plans if p.problem is None and p.result is not None and not p.result.missing]
    failed = len(plans) - len(done)  # a file left whole, or with a docstring the language has no text for
    switched = sum(1 for p in done if p.before != p.after)
    same = len(done) - switched
    kept = sum(1 for p in done if p.result is not None and p.result.kept)
    print(_("docstrings in {language}: {switched} of {count} drill files switched, {same} already were, "
            "{kept} keep docstrings of yours, {failed} not switched",
            language=language, switched=switched, count=len(plans), same=same, kept=kept, failed=failed))
    if switched:
        print(_("each file as it was before: {path}", path=where.shown_path(where.submission / BACKUP_DIR)))
    spoken = i18n.choose(None, where.course.language)
    if spoken is not target:
        print(_("the commands speak {language} with --lang {lang}, or for every command after "
                "`export TORCHDRILL_LANG={lang}`", language=language, lang=target.value))
    return EXIT_OK if failed == 0 else EXIT_NOT_ALL


def _say(where: Place, plan: _Plan, language: str) -> None:
    shown = where.shown_path(plan.path)
    if plan.problem is not None:
        print(_("{path}: not switched: {why}", path=shown, why=plan.problem))
        return
    result = plan.result  # a file switched whole is counted, not named
    assert result is not None
    if result.kept:
        print(_("{path}: kept as you wrote it (not one of the course's texts): {names}",
                path=shown, names=_names(result.kept)))
    if result.missing:
        print(_("{path}: left as it is (no {language} text for it here): {names}",
                path=shown, language=language, names=_names(result.missing)))


def _names(names: Iterable[str]) -> str:
    return ", ".join(_("the module docstring") if n == "" else n for n in names)
