"""The language a person reads, and the engine's words in it.

Two languages are first-class: ``en`` (the words as the code writes them) and
``zh_CN``. The engine's messages are gettext messages: ``_("... {name} ...")`` in the
code, extracted with Babel (``tox -e catalogs``: ``babel-messages.cfg`` for the engine,
``babel-reports.cfg`` for the reports and their templates) into ``grader/locale/*.pot``,
translated in ``grader/locale/<lang>/LC_MESSAGES/*.po`` and compiled to the ``.mo``
files the package ships (``grader.tests.test_messages`` checks that every
message has its translation, the same placeholders, and a compiled catalog that is
up to date).

The language is chosen, never installed process-wide: a grading process renders
many students' reports, each perhaps in another language, and the sandbox's workers
run with a scrubbed locale. ``choose`` picks it (``--lang``, then
``$TORCHDRILL_LANG``, then the course's default, then the locale); ``translator``
gives the ``Translator`` to pass to whatever writes words. Commands that print run
under ``speaking(lang)``, which sets the language of ``_`` for that context only.

Messages that are kept (``results.json``) are kept as a ``Message``: the id, its
parameters and the English text, so a report renders them in any language later.
"""

from __future__ import annotations

import contextvars
import gettext
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

LANG_ENV = "TORCHDRILL_LANG"
DOMAINS = ("torchdrill", "reports")  # the engine's messages; the reports' words (babel-*.cfg)
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
LOCALE_ENVS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # gettext's order


class UnknownLanguage(ValueError):
    """A language asked for by name that the course does not speak (the command line
    reports it as a usage error)."""


class Lang(StrEnum):
    EN = "en"
    ZH_CN = "zh_CN"

    @property
    def html(self) -> str:
        """The BCP 47 tag for ``<html lang>``."""
        return {Lang.EN: "en", Lang.ZH_CN: "zh-CN"}[self]


def parse(value: str) -> Lang | None:
    """The language ``value`` names (``zh``, ``zh_CN``, ``zh-CN``, ``zh_CN.UTF-8``,
    ``zh-Hans``, ``en_US``, ``C``...), or None for one the course does not speak."""
    tag = value.strip().split(".")[0].split("@")[0].replace("-", "_").lower()
    if tag in ("zh", "zh_cn", "zh_hans", "zh_hans_cn", "zh_sg"):
        return Lang.ZH_CN
    if tag in ("c", "posix") or tag == "en" or tag.startswith("en_"):
        return Lang.EN
    return None


def choose(flag: str | None = None, course_default: str | None = None,
           environ: Mapping[str, str] | None = None) -> Lang:
    """The language to speak: ``--lang``, then ``$TORCHDRILL_LANG``, then the course's
    default, then the locale (its first language the course speaks), then English.
    A ``--lang`` or ``$TORCHDRILL_LANG`` the course does not speak is an error."""
    env = os.environ if environ is None else environ
    for value, source in ((flag, "--lang"), (env.get(LANG_ENV) or None, f"${LANG_ENV}")):
        if value is not None:
            lang = parse(value)
            if lang is None:
                raise UnknownLanguage(f"{source} {value!r}: not a language of this course "
                                 f"(known: {', '.join(Lang)})")
            return lang
    if course_default:
        lang = parse(course_default)
        if lang is not None:
            return lang
    for name in LOCALE_ENVS:
        for value in (env.get(name) or "").split(":"):
            lang = parse(value) if value else None
            if lang is not None:
                return lang
    return Lang.EN


MAX_KEPT = 8000  # characters of a kept message's id, and of each parameter
_FIELD = re.compile(r"\{[^{}]*\}")
_SAFE_FIELD = re.compile(r"\{\w+(:\.?\d?[gdf])?\}")


@dataclass(frozen=True)
class Message:
    """A message kept for later: its id (the English, with ``{name}`` placeholders)
    and parameters; ``str()`` is the English text."""

    id: str
    params: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return _format(self.id, self.params)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "params": dict(self.params)}

    @staticmethod
    def from_json(data: Any) -> Message | None:
        """A kept message, or None for anything that is not one: an older results.json,
        or one made by hand, whose id or parameters are not what the engine writes
        (plain ``{name}`` placeholders, a short number format at most, bounded text:
        ``{x:>999999999}`` would be a gigabyte of spaces)."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return None
        msgid, params = data["id"], data.get("params", {})
        if len(msgid) > MAX_KEPT or not isinstance(params, dict) or len(params) > 20:
            return None
        fields = _FIELD.findall(msgid.replace("{{", "").replace("}}", ""))
        if any(not _SAFE_FIELD.fullmatch(f) for f in fields) or "{" in _FIELD.sub("", msgid.replace("{{", "")):
            return None
        for key, value in params.items():
            if not isinstance(key, str) or isinstance(value, (dict, list)) or len(str(value)) > MAX_KEPT:
                return None
        return Message(msgid, dict(params))


def _format(text: str, params: Mapping[str, Any]) -> str:
    try:
        return text.format(**params) if params else text
    except (KeyError, IndexError, ValueError):  # a catalog that lost a placeholder: the id's words
        return text


@dataclass(frozen=True)
class Translator:
    """The engine's words in one language."""

    lang: Lang
    catalog: gettext.NullTranslations

    def __call__(self, msgid: str, /, **params: Any) -> str:
        return _format(self.catalog.gettext(msgid), params)

    gettext = __call__

    def ngettext(self, singular: str, plural: str, n: int, /, **params: Any) -> str:
        return _format(self.catalog.ngettext(singular, plural, n), {"n": n, **params})

    def message(self, message: Message) -> str:
        return self(message.id, **message.params)


@cache
def translator(lang: Lang | str = Lang.EN) -> Translator:
    """The translator for ``lang`` (English: the ids themselves)."""
    lang = Lang(lang)
    if lang is Lang.EN:
        return Translator(lang, gettext.NullTranslations())
    catalog: gettext.NullTranslations = gettext.NullTranslations()
    for domain in reversed(DOMAINS):  # each falls back on the next, then on the English ids
        try:
            with open(LOCALE_DIR / lang.value / "LC_MESSAGES" / f"{domain}.mo", "rb") as fp:
                found = gettext.GNUTranslations(fp)
        except OSError:  # an installation without its catalogs: English rather than nothing
            continue
        found.add_fallback(catalog)
        catalog = found
    return Translator(lang, catalog)


_current: contextvars.ContextVar[Lang] = contextvars.ContextVar("torchdrill_lang", default=Lang.EN)


@contextmanager
def speaking(lang: Lang) -> Iterator[Translator]:
    """Run a block with ``_`` speaking ``lang`` (this context only)."""
    token = _current.set(lang)
    try:
        yield translator(lang)
    finally:
        _current.reset(token)


def current() -> Translator:
    return translator(_current.get())


def _(msgid: str, /, **params: Any) -> str:
    """``msgid`` in the language of the running command, placeholders filled."""
    return current()(msgid, **params)


def ngettext(singular: str, plural: str, n: int, /, **params: Any) -> str:
    return current().ngettext(singular, plural, n, **params)


def N_(msgid: str) -> str:
    """Mark ``msgid`` for extraction without translating it now (a constant's text)."""
    return msgid
