"""One choice of language, honoured everywhere a learner looks: ``tox -e grade``, a
command run with ``--course``, a notebook's ``check``, the handout's README and
notebooks, the drills' one-line descriptions and the Gradescope run."""

from __future__ import annotations

import configparser
import io
import json
import re
import tokenize
import tomllib
from pathlib import Path
from typing import Any

import pytest

from grader import cli
from grader.authoring import handout_notebooks, student_files
from grader.core import drill_texts, i18n, syllabus
from grader.gradescope import autograder, run
from grader.gradescope.facts import COURSE, PAYLOAD, grader_failed_result, not_gradable_result
from grader.learner import notebook
from grader.tests.grading import REPO
from grader.tests.sample_results import mixed_results

COURSE_ = syllabus.load(REPO)
CJK = re.compile(r"[\u4e00-\u9fff]")
# three or more English words in a row: prose, not an identifier or a value
ENGLISH_PROSE = re.compile(r"\b[A-Za-z]{2,}(?:[ ,']+[a-z]{2,}){2,}\b")


def _tox() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(REPO / "tox.ini", encoding="utf-8")
    return parser


def _setting(parser: configparser.ConfigParser, env: str, key: str) -> str:
    """A tox setting as tox reads it: the environment's own, else [testenv]'s."""
    section = f"testenv:{env}"
    return parser[section][key] if parser.has_option(section, key) else parser["testenv"].get(key, "")


def test_tox_grade_honours_the_learners_language_and_the_tests_stay_english():
    parser = _tox()
    grade_env = _setting(parser, "grade", "set_env")
    assert "TORCHDRILL_LANG" not in grade_env  # $TORCHDRILL_LANG passes through, else course.toml, else the locale
    assert "PIP_CONSTRAINT = {toxinidir}/constraints-cpu.txt" in grade_env
    passed = _setting(parser, "grade", "pass_env")
    assert "TORCHDRILL_*" in passed and "LC_ALL" in passed and "LC_MESSAGES" in passed
    assert "TORCHDRILL_LANG = en" in parser["testenv"]["set_env"]  # the engine's tests read English unless asked
    handout = configparser.ConfigParser(interpolation=None)
    handout.read_string(student_files.student_tox_ini(REPO / "tox.ini"))
    assert "TORCHDRILL_LANG" not in _setting(handout, "grade", "set_env")


def test_a_command_speaks_the_language_of_the_course_it_is_given(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCHDRILL_LANG", raising=False)
    monkeypatch.setenv("LANGUAGE", "en")
    (tmp_path / "course.toml").write_text('language = "zh_CN"\n', encoding="utf-8")
    monkeypatch.chdir(REPO)  # an English course here; the command names the other one
    assert cli.chosen_lang(["list", "--course", str(tmp_path)]) is i18n.Lang.ZH_CN
    assert cli.chosen_lang(["list", f"--course={tmp_path}"]) is i18n.Lang.ZH_CN
    assert cli.chosen_lang(["list", "--course", str(tmp_path), "--lang", "en"]) is i18n.Lang.EN
    assert cli.chosen_lang(["list"]) is i18n.Lang.EN


def test_a_notebooks_check_takes_the_language_it_is_given(monkeypatch):
    monkeypatch.setenv("TORCHDRILL_LANG", "en")
    spoken: list[i18n.Lang] = []

    def heard(root: Path, loaded: syllabus.Course, name: str) -> bool:
        spoken.append(i18n.current().lang)
        return True

    monkeypatch.setattr(notebook, "_check", heard)
    assert notebook.check("one_hot", REPO, lang="zh_CN")
    assert notebook.check("one_hot", REPO)
    assert spoken == [i18n.Lang.ZH_CN, i18n.Lang.EN]


# ------------------------------------------------------------------ descriptions

def test_a_drills_description_is_its_whole_first_sentence():
    cut = syllabus.drill_facts(REPO, "nn/batch_norm_stats")["title"]
    assert cut.startswith("BatchNorm by hand") and "updated in place" in cut and cut.endswith(".")
    hooks = syllabus.drill_facts(REPO, "autograd/hooks")["title"]
    assert hooks.endswith("through the submodules.") and "Each property" not in hooks
    for drill in COURSE_.ids:
        title = syllabus.drill_facts(REPO, drill)["title"]
        assert title.endswith((".", ")")), (drill, title)
    assert syllabus.summary("e.g. a b.\nc d. Next one.\n\nOther.") == "e.g. a b. c d."
    assert syllabus.summary("An optimizer, e.g. Adam, with a warmup. Then more.") == \
        "An optimizer, e.g. Adam, with a warmup."
    assert syllabus.summary("第一句，\n接着。第二句。") == "第一句，接着。"


# ------------------------------------------------------------------ the handout

def _public() -> dict[str, list[str]]:
    return {d: ["test_x"] for d in COURSE_.ids}


def test_a_chinese_release_has_a_chinese_readme():
    zh = student_files.student_readme(REPO, COURSE_, _public(), notebooks=True, lang="zh_CN")
    en = student_files.student_readme(REPO, COURSE_, _public(), notebooks=True, lang="en")
    assert zh.startswith(f"# {drill_texts.course_title(COURSE_, 'zh_CN')}\n")
    assert drill_texts.topic_title(COURSE_, "zh_CN", "tensors") in zh
    texts = drill_texts.load(REPO, "zh_CN", "nn/batch_norm_stats")
    assert texts is not None and texts.module is not None
    assert syllabus.summary(texts.module).replace("``", "") in zh
    prose = [line for line in _prose(zh) if ENGLISH_PROSE.search(line)]
    assert prose == []
    assert "## The loop" in en and "BatchNorm by hand" in en and not CJK.search(en)
    # the same commands and the same drills in both
    assert _commands(zh) == _commands(en)
    assert re.findall(r"`(\w+/\w+)`", zh) == re.findall(r"`(\w+/\w+)`", en)


def _prose(markdown: str) -> list[str]:
    """The README's lines outside code: code blocks, `code` spans and links' targets left out."""
    out, in_code = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            out.append(re.sub(r"`[^`]*`|\]\([^)]*\)", "", line))
    return out


def _commands(markdown: str) -> list[str]:
    return re.findall(r"^\s*((?:torchdrill|pip|python|tox)[^#\n]*?)\s*(?:#.*)?$", markdown, re.M)


def test_the_notebooks_set_up_cell_speaks_the_handouts_language():
    topic = COURSE_.topics[0]
    zh = json.loads(handout_notebooks.topic_notebook(REPO, topic, "课程", "", "zh_CN"))
    en = json.loads(handout_notebooks.topic_notebook(REPO, topic, "Course", "", "en"))
    setup_zh, setup_en = "".join(zh["cells"][1]["source"]), "".join(en["cells"][1]["source"])
    compile(setup_zh, "setup", "exec")
    tokens = list(tokenize.generate_tokens(io.StringIO(setup_zh).readline))
    said = [t.string for t in tokens if t.type == tokenize.COMMENT and "noqa" not in t.string]
    said += [t.string for i, t in enumerate(tokens) if t.type == tokenize.STRING
             and tokens[i - 2].string in ("RuntimeError", "print")]
    assert len(said) == 6
    assert said and all(CJK.search(s) and not ENGLISH_PROSE.search(s) for s in said), said
    assert "run this cell once per session" in setup_en and not CJK.search(setup_en)
    assert "## `" in "".join(zh["cells"][2]["source"]) and "分" in "".join(zh["cells"][2]["source"])


# ------------------------------------------------------------------ Gradescope

def test_the_autograder_zip_carries_the_courses_texts_and_language():
    en = autograder._course_files(REPO)
    assert "locales/zh_CN/tensors/one_hot.toml" in en and "locales/zh_CN/course.toml" in en
    assert 'language = "zh_CN"' not in en["course.toml"].decode()
    zh = autograder._course_files(REPO, i18n.Lang.ZH_CN)
    assert tomllib.loads(zh["course.toml"].decode())["language"] == "zh_CN"
    fallback = json.loads(autograder.run_script(i18n.Lang.ZH_CN).split("<<'EOF'\n")[1].split("\nEOF")[0])
    assert CJK.search(fallback["output"])


def test_the_gradescope_run_speaks_the_courses_language(tmp_path):
    course = tmp_path / "source" / PAYLOAD / COURSE
    course.parent.mkdir(parents=True)
    course.symlink_to(REPO)
    results = mixed_results()
    phrase = "num_classes must be inferred from an empty tensor"  # one of the drill's own failure phrases
    one_hot = next(ex for ex in results["exercises"] if ex["id"] == "tensors/one_hot")
    failed = next(t for t in one_hot["tests"] if t["outcome"] == "failed")
    failed["message"] = phrase
    zh = run.student_answer(tmp_path, results, i18n.Lang.ZH_CN)
    outputs = "\n".join(t["output"] for t in zh["tests"])
    texts = drill_texts.load(REPO, "zh_CN", "tensors/one_hot")
    assert texts is not None and texts.phrases[phrase] in outputs and phrase not in outputs
    assert phrase in "\n".join(t["output"] for t in run.student_answer(tmp_path, results, i18n.Lang.EN)["tests"])
    with i18n.speaking(i18n.Lang.ZH_CN):
        refused, broken = not_gradable_result("no drill found", ["tensors/one_hot"]), grader_failed_result("boom")
    for answer in (refused, broken):
        assert CJK.search(answer["output"]) and "could not be graded" not in answer["output"] \
            and "The autograder itself failed" not in answer["output"]
    assert "could not be graded" in not_gradable_result("no drill found", ["tensors/one_hot"])["output"]


@pytest.mark.parametrize("lang", list(i18n.Lang))
def test_the_notebook_note_speaks_the_run_language(lang):
    results: Any = {"exercises": [{"id": "tensors/one_hot", "source": {
        "notebook": "hw.ipynb", "functions": [{"name": "one_hot", "cell": 3, "line": 6}], "from_stub": ["x"]}}]}
    with i18n.speaking(lang):
        note = run.notebook_note(results)
    assert ("one_hot()" in note) and bool(CJK.search(note)) is (lang is i18n.Lang.ZH_CN)
