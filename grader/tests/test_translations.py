"""Both languages are whole: every drill's docstrings, hints and property titles exist
in English and in Chinese, their code examples agree, and the Chinese follows the glossary."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from grader.core import drill_texts, syllabus
from grader.core.stubs import handout_source
from grader.tests.grading import REPO

LANGS = ("zh_CN",)
COURSE = syllabus.load(REPO)
GLOSSARY = tomllib.loads((REPO / "locales" / "glossary.toml").read_text(encoding="utf-8"))


def _english_source(drill_id: str) -> str:
    return handout_source(REPO, drill_id)


def property_names(test_source: str) -> list[str]:
    """The properties a drill's test file defines: its module-level ``test_*`` functions."""
    return [n.name for n in ast.parse(test_source).body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("drill_id", COURSE.ids)
def test_every_docstring_and_hint_is_translated_with_the_same_examples(drill_id, lang):
    texts = drill_texts.load(REPO, lang, drill_id)
    where = str(drill_texts.path_of(REPO, lang, drill_id).relative_to(REPO))
    tests = syllabus.exercise_tests(REPO)[drill_id].read_text(encoding="utf-8")
    assert drill_texts.problems(_english_source(drill_id), COURSE.drill(drill_id).hints, texts, where,
                                property_names(tests)) == []


def test_no_translation_names_a_drill_the_course_lacks():
    for lang in LANGS:
        root = REPO / drill_texts.LOCALES / lang
        found = {str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.toml")
                 if p.relative_to(root) != Path(drill_texts.COURSE_TEXTS)}
        assert found - set(COURSE.ids) == set()


def _prose(text: str) -> str:
    """What a term is looked for in: not the code (``...`` spans, examples)."""
    text = re.sub(r"``.*?``|`[^`]*`", " ", text, flags=re.S)
    code = set(drill_texts.examples(text))
    return "\n".join(line for line in text.splitlines() if line.strip() not in code)


def missing_terms(english: str, translated: str, terms: dict[str, str]) -> list[str]:
    """Glossary terms ``english`` uses whose translation ``translated`` lacks; the
    longest term wins where terms overlap ("batch normalization" before "batch")."""
    prose = _prose(english).lower()
    missing = []
    for term in sorted(terms, key=len, reverse=True):
        pattern = re.compile(r"\b" + re.escape(term.lower()) + r"(e?s)?\b")
        if pattern.search(prose):
            prose = pattern.sub(" ", prose)
            if terms[term] not in translated:
                missing.append(f"{term} = {terms[term]}")
    return missing


def test_the_glossary_check_can_fail():
    terms = {"batch": "批次", "batch normalization": "批归一化"}
    assert missing_terms("Batch normalization of each batch.", "批归一化", terms) == ["batch = 批次"]
    assert missing_terms("``batch`` only", "", terms) == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("drill_id", COURSE.ids)
def test_the_translation_follows_the_glossary(drill_id, lang):
    texts = drill_texts.load(REPO, lang, drill_id)
    if texts is None:
        pytest.fail(f"{drill_id}: no {lang} translation")
    terms = GLOSSARY[lang]
    english = drill_texts.docstrings(_english_source(drill_id))
    theirs = {"": texts.module or "", **texts.docstrings}
    problems = {}
    for name, text in english.items():
        missing = missing_terms(text, theirs.get(name, ""), terms)
        if missing:
            problems[name or "module"] = missing
    for i, (en, zh) in enumerate(zip(COURSE.drill(drill_id).hints, texts.hints)):
        missing = missing_terms(en, zh, terms)
        if missing:
            problems[f"hint {i + 1}"] = missing
    assert problems == {}


def test_a_report_in_chinese_names_each_property_by_its_title():
    """``with_titles`` gives each test record its translated title (a parametrized test's
    too); English results are left as they are."""
    names = property_names(syllabus.exercise_tests(REPO)["tensors/one_hot"].read_text(encoding="utf-8"))
    results: dict[str, Any] = {"exercises": [{"id": "tensors/one_hot", "tests": [{"name": names[0], "outcome": "passed"},
                                                                  {"name": f"{names[1]}[2]", "outcome": "failed"}]}]}
    zh = drill_texts.with_titles(results, REPO, "zh_CN")
    texts = drill_texts.load(REPO, "zh_CN", "tensors/one_hot")
    assert texts is not None
    assert [t["title"] for t in zh["exercises"][0]["tests"]] == [texts.properties[names[0]], texts.properties[names[1]]]
    assert drill_texts.property_titles(zh)[names[0]] == texts.properties[names[0]]
    assert drill_texts.with_titles(results, REPO, "en") is results
    assert "title" not in results["exercises"][0]["tests"][0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("drill_id", COURSE.ids)
def test_the_phrases_are_well_formed(drill_id, lang):
    """The tests' own failure phrases: the same placeholders in both languages, and no
    template that would match any text."""
    texts = drill_texts.load(REPO, lang, drill_id)
    assert texts is not None
    assert [p for en, zh in texts.phrases.items() for p in drill_texts.phrase_problems(en, zh)] == []


def test_a_failure_message_is_rendered_with_the_courses_phrases():
    """The engine's words from the catalog, the course's from the drill's ``[phrases]``:
    a kept message's ``what`` and an assertion's own text; a student's traceback as written."""
    from grader.core import i18n
    from grader.core.results_json import message_text

    zh = i18n.translator(i18n.Lang.ZH_CN)
    phrases = {"the padded batch of {n} sequences": "{n} 个序列填充后的批次", "a label is negative": "某个标签为负"}
    kept = i18n.Message("{what}: dtype differs: got {got}, expected {expected}",
                        {"what": "the padded batch of 3 sequences", "got": "torch.float32", "expected": "torch.int64"})
    record = {"message": str(kept) + "\ntraceback", "message_id": kept.to_json(), "phrases": phrases}
    shown = message_text(record, zh)
    assert shown.startswith("3 个序列填充后的批次") and shown.endswith("\ntraceback") and "torch.int64" in shown
    assert message_text({"message": "a label is negative\nmore", "phrases": phrases}, zh) == "某个标签为负\nmore"
    assert message_text({"message": "a label is negative"}, zh) == "a label is negative"
    assert drill_texts.phrase_problems("{what}", "{what}") and drill_texts.phrase_problems("a {x}", "一个")
