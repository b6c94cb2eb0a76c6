"""The engine's message catalogs are whole: every message the code marks is in each
language's catalog, translated, with the same placeholders, and compiled."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from grader.core import i18n
from grader.tests.grading import REPO

LOCALE = REPO / "grader" / "locale"
LANGS = [lang for lang in i18n.Lang if lang is not i18n.Lang.EN]
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}|%\((\w+)\)[sdrf]")


def _catalog(path: Path):
    with open(path, "rb") as fp:
        return read_mo(fp) if path.suffix == ".mo" else read_po(fp)


def placeholders(text: str) -> set[str]:
    """``{name}`` and ``%(name)s`` placeholders of a message (``{{`` is no placeholder)."""
    return {a or b for a, b in PLACEHOLDER.findall(text.replace("{{", "").replace("}}", ""))}


def test_the_templates_are_what_the_code_marks(tmp_path):
    """``tox -e catalogs`` was run since the last marked message changed."""
    bin_dir = Path(sys.executable).parent  # pybabel beside this Python (tox's environment)
    subprocess.run(["bash", "grader/locale/update.sh", str(tmp_path)], cwd=REPO, check=True,
                   env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    for domain in i18n.DOMAINS:
        fresh = {m.id for m in _catalog(tmp_path / f"{domain}.pot") if m.id}
        kept = {m.id for m in _catalog(LOCALE / f"{domain}.pot") if m.id}
        assert fresh == kept, f"{domain}: run tox -e catalogs"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_every_message_is_translated_with_its_placeholders(domain, lang):
    template = {m.id for m in _catalog(LOCALE / f"{domain}.pot") if m.id}
    po = _catalog(LOCALE / lang / "LC_MESSAGES" / f"{domain}.po")
    messages = {m.id: m for m in po if m.id}
    assert set(messages) == template, "run tox -e catalogs"
    problems = []
    for msgid, m in messages.items():
        ids = msgid if isinstance(msgid, tuple) else (msgid,)
        strs = m.string if isinstance(m.string, tuple) else (m.string,)
        if m.fuzzy or not all(strs):
            problems.append(f"untranslated: {ids[0]!r}")
        elif any(placeholders(s) != placeholders(ids[-1]) for s in strs):
            problems.append(f"placeholders differ: {ids[0]!r}")
    assert problems == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("domain", i18n.DOMAINS)
def test_the_compiled_catalog_is_the_catalog(domain, lang):
    folder = LOCALE / lang / "LC_MESSAGES"
    po, mo = _catalog(folder / f"{domain}.po"), _catalog(folder / f"{domain}.mo")
    def pairs(catalog) -> dict:  # a plural's ids and strings come as lists from a .mo
        return {tuple(m.id) if isinstance(m.id, list | tuple) else m.id:
                tuple(m.string) if isinstance(m.string, list | tuple) else m.string for m in catalog if m.id}
    assert pairs(po) == pairs(mo), "run tox -e catalogs to compile"


def test_placeholders_are_read_both_ways():
    assert placeholders("{n} of {total:.1f} in %(name)s, {{not}}") == {"n", "total", "name"}


def test_the_language_is_chosen_in_order():
    env = {"LANG": "zh_CN.UTF-8"}
    assert i18n.choose(None, None, env) is i18n.Lang.ZH_CN
    assert i18n.choose(None, "en", env) is i18n.Lang.EN
    assert i18n.choose(None, "en", {**env, i18n.LANG_ENV: "zh"}) is i18n.Lang.ZH_CN
    assert i18n.choose("en", None, {**env, i18n.LANG_ENV: "zh"}) is i18n.Lang.EN
    assert i18n.choose(None, None, {"LANG": "C.UTF-8"}) is i18n.Lang.EN
    assert i18n.choose(None, None, {"LANGUAGE": "fr:zh_CN", "LANG": "en_US.UTF-8"}) is i18n.Lang.ZH_CN
    with pytest.raises(i18n.UnknownLanguage, match="--lang 'fr'"):
        i18n.choose("fr", None, {})
