"""``torchdrill stubs --lang LANG``: a clone's drill files switch their docstrings to a
language in place and back, byte for byte; the code in them, a docstring the learner
edited and anything the command cannot read safely are left as they are."""

from __future__ import annotations

import ast
import inspect
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.cli import main
from grader.core import docstring_record, drill_texts, syllabus
from grader.core.stubs import handout_source, write_stubs
from grader.learner import stub_language
from grader.learner.stub_language import BACKUP_DIR, ENGLISH_FILE, switch
from grader.tests.grading import REPO

DRILL = "tensors/one_hot"
_ZH = drill_texts.load(REPO, "zh_CN", DRILL)
assert _ZH is not None
ZH: drill_texts.DrillTexts = _ZH
ENGLISH = drill_texts.docstrings((REPO / "exercises" / f"{DRILL}.py").read_text(encoding="utf-8"))
_FN = next(n for n in ast.parse((REPO / "reference" / f"{DRILL}.py").read_text()).body
           if isinstance(n, ast.FunctionDef) and n.name == "one_hot")
REFERENCE_BODY = ast.unparse(ast.Module(body=_FN.body[1:], type_ignores=[]))


def known() -> dict[str, dict[str, str]]:
    return {"en": dict(ENGLISH), "zh_CN": stub_language.texts_of(ZH)}


def stubs(folder: Path, lang: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["stubs", "--course", str(REPO), "--submission", str(folder), "--lang", lang])
    return code, capsys.readouterr().out


@pytest.fixture()
def clone(tmp_path: Path) -> Path:
    """A learner's exercises/: the course's stubs, outside any git checkout (the pristine
    ones: this checkout's exercises/ may hold a learner's work)."""
    folder = tmp_path / "exercises"
    write_stubs(REPO, folder)
    return folder


def _bodies(source: str) -> str:
    """The module's code with every docstring blanked: what a switch may never change."""
    tree = ast.parse(source)
    for _name, node in drill_texts.docstring_nodes(tree):
        node.value = ""
    return ast.dump(tree)


# ------------------------------------------------------------------ the whole command

def test_a_clone_switches_to_chinese_and_back_byte_for_byte(clone, capsys):
    before = {p: p.read_bytes() for p in clone.rglob("*.py")}
    code, out = stubs(clone, "zh_CN", capsys)
    assert code == 0 and "44 个练习文件中，44 个已切换" in out  # said in the language asked for
    for drill in ("tensors/one_hot", "nn/batch_norm_stats", "speed/checkpoint"):  # as a Chinese handout has them
        assert (clone / f"{drill}.py").read_text(encoding="utf-8") == handout_source(REPO, drill, "zh_CN")
    assert (clone / ENGLISH_FILE).is_file() and (clone / BACKUP_DIR / f"{DRILL}.py").read_bytes() == before[clone / f"{DRILL}.py"]
    code, out = stubs(clone, "zh_CN", capsys)  # again: nothing to do, nothing written
    assert code == 0 and "0 个已切换，44 个原本就是" in out
    code, out = stubs(clone, "en", capsys)
    assert code == 0
    assert {p: p.read_bytes() for p in clone.rglob("*.py") if BACKUP_DIR not in p.parts} == before


def test_code_written_in_the_bodies_is_never_touched(clone, capsys):
    path = clone / f"{DRILL}.py"
    source = path.read_text(encoding="utf-8")
    mine = source.replace("    raise NotImplementedError", "    " + REFERENCE_BODY.replace("\n", "\n    ")
                          + "  # my answer, 中文注释", 1)
    mine = mine.replace("import torch\n", "import torch\n\nHELPER = '''not a docstring'''\n", 1)
    path.write_text(mine, encoding="utf-8")
    assert stubs(clone, "zh_CN", capsys)[0] == 0
    switched = path.read_text(encoding="utf-8")
    assert _bodies(switched) == _bodies(mine) and "# my answer, 中文注释" in switched
    assert drill_texts.docstrings(switched)["one_hot"] == inspect.cleandoc(ZH.docstrings["one_hot"])
    assert stubs(clone, "en", capsys)[0] == 0
    assert path.read_text(encoding="utf-8") == mine


def test_an_edited_docstring_is_kept_and_said_in_either_language(clone, capsys):
    path = clone / f"{DRILL}.py"
    assert stubs(clone, "zh_CN", capsys)[0] == 0
    edited = path.read_text(encoding="utf-8").replace("返回 ``labels`` 的独热编码。", "返回独热编码。我的笔记：先 unsqueeze。")
    path.write_text(edited, encoding="utf-8")
    code, out = stubs(clone, "en", capsys)
    assert code == 0 and f"{DRILL}.py" in out and "one_hot" in out
    now = drill_texts.docstrings(path.read_text(encoding="utf-8"))
    assert "我的笔记：先 unsqueeze。" in now["one_hot"] and now[""] == ENGLISH[""]


def test_an_english_edit_before_the_first_switch_is_kept_in_a_git_clone(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("no git on this machine")
    folder = tmp_path / "exercises" / "tensors"
    folder.mkdir(parents=True)
    path = folder / "one_hot.py"
    path.write_bytes((REPO / "exercises" / f"{DRILL}.py").read_bytes())
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "clone"]):
        subprocess.run([*git, *args], check=True, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull})
    edited = path.read_text(encoding="utf-8").replace("Return the one-hot encoding of ``labels``.",
                                                      "Return the one-hot encoding of ``labels``. My note.")
    path.write_text(edited, encoding="utf-8")
    code, out = stubs(tmp_path / "exercises", "zh_CN", capsys)
    assert code == 0 and "one_hot" in out
    now = drill_texts.docstrings(path.read_text(encoding="utf-8"))
    assert "My note." in now["one_hot"] and now[""] == inspect.cleandoc(str(ZH.module))


def test_a_chinese_handout_switches_to_english_with_the_english_the_release_kept(tmp_path, capsys):
    folder = tmp_path / "exercises"
    drills = ["tensors/one_hot", "nn/conv2d"]
    for drill in drills:  # as `release --lang zh_CN` writes them: Chinese stubs, the English beside them
        (folder / drill).parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{drill}.py").write_text(handout_source(REPO, drill, "zh_CN"), encoding="utf-8")
    docstring_record.write(folder, docstring_record.of_course(REPO, drills))
    code, out = stubs(folder, "en", capsys)
    assert code == 0 and "2 of 2" in out
    for drill in drills:
        assert (folder / f"{drill}.py").read_text(encoding="utf-8") == handout_source(REPO, drill, "en")


def test_a_file_the_command_cannot_read_safely_is_left_alone(clone, tmp_path, capsys):
    broken = clone / "tensors" / "padding.py"
    broken.write_text(broken.read_text(encoding="utf-8") + "\ndef oops(:\n", encoding="utf-8")
    target = tmp_path / "elsewhere.py"
    target.write_bytes((clone / "tensors" / "scatter.py").read_bytes())
    (clone / "tensors" / "scatter.py").unlink()
    (clone / "tensors" / "scatter.py").symlink_to(target)
    latin = clone / "tensors" / "indexing.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n" + latin.read_bytes())
    kept = {p: p.read_bytes() for p in (broken, target, latin)}
    code, out = stubs(clone, "zh_CN", capsys)
    assert code == stub_language.EXIT_NOT_ALL
    assert {p: p.read_bytes() for p in kept} == kept and (clone / "tensors" / "scatter.py").is_symlink()
    for name in ("padding.py", "scatter.py", "indexing.py"):
        assert f"{name}：未切换：" in out
    assert "41 个已切换" in out and "3 个未切换" in out  # the others are switched
    assert drill_texts.docstrings((clone / f"{DRILL}.py").read_text(encoding="utf-8"))[""] \
        == inspect.cleandoc(str(ZH.module))


def test_crlf_line_ends_and_a_byte_order_mark_are_kept(clone, capsys):
    path = clone / f"{DRILL}.py"
    original = b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(original)
    os.chmod(path, 0o600)
    assert stubs(clone, "zh_CN", capsys)[0] == 0
    switched = path.read_bytes()
    assert switched.startswith(b"\xef\xbb\xbf") and b"\n" not in switched.replace(b"\r\n", b"")
    assert "独热编码".encode() in switched and (path.stat().st_mode & 0o777) == 0o600
    assert stubs(clone, "en", capsys)[0] == 0
    assert path.read_bytes() == original


def test_a_broken_record_of_the_english_stops_the_command(clone, capsys):
    (clone / ENGLISH_FILE).write_text("{not json", encoding="utf-8")
    before = (clone / f"{DRILL}.py").read_bytes()
    code = main(["stubs", "--course", str(REPO), "--submission", str(clone), "--lang", "zh_CN"])
    assert code == 2 and ENGLISH_FILE in capsys.readouterr().err
    assert (clone / f"{DRILL}.py").read_bytes() == before


def test_a_file_saved_while_switching_is_left_as_saved(tmp_path):
    path = tmp_path / "one_hot.py"
    path.write_bytes(b"old")
    path.write_bytes(b"saved by the learner's editor")  # between the command's read and its write
    assert not stub_language.replace_if_unchanged(path, b"old", b"switched", 0o644)
    assert path.read_bytes() == b"saved by the learner's editor"
    assert stub_language.replace_if_unchanged(path, path.read_bytes(), b"switched", 0o644)
    assert path.read_bytes() == b"switched" and [p.name for p in tmp_path.iterdir()] == ["one_hot.py"]


def test_the_help_says_how(capsys):
    with pytest.raises(SystemExit):
        main(["stubs", "--help", "--lang", "en"])
    out = capsys.readouterr().out
    assert "torchdrill stubs --lang zh_CN" in out and "--lang en" in out and "--submission" in out
    with pytest.raises(SystemExit):
        main(["stubs", "--help", "--lang", "zh_CN"])
    assert "文档字符串" in capsys.readouterr().out


# ------------------------------------------------------------------ one file, in memory

def test_a_renamed_function_keeps_its_specs_text_switched_and_a_deleted_one_is_no_matter():
    source = (REPO / "exercises" / f"{DRILL}.py").read_text(encoding="utf-8").replace("def one_hot(", "def my_one_hot(")
    done = switch(source, known(), "zh_CN")
    assert drill_texts.docstrings(done.source)["my_one_hot"] == inspect.cleandoc(ZH.docstrings["one_hot"])
    assert switch(done.source, known(), "en").source == source
    module_only = '"""' + ENGLISH[""] + '"""\n\nimport torch\n'
    assert drill_texts.docstrings(switch(module_only, known(), "zh_CN").source)[""] == inspect.cleandoc(str(ZH.module))


def test_a_docstring_turned_into_code_is_code():
    doc = '"""' + ENGLISH["one_hot"].splitlines()[0] + '"""'
    moved = f"def one_hot(labels, num_classes=-1):\n    x = 1\n    {doc}\n    return x\n"
    assigned = f"def one_hot(labels, num_classes=-1):\n    spec = {doc}\n    return spec\n"
    fstring = f"def one_hot(labels, num_classes=-1):\n    f{doc}\n    return 1\n"
    for source in (moved, assigned, fstring):
        done = switch(source, known(), "zh_CN")
        assert done.source == source and not done.switched


def test_one_line_docstrings_of_any_width_switch_both_ways():
    texts = {"en": {"f": "Return it.", "g": 'Say "hi"'}, "zh_CN": {"f": "返回它。", "g": "说“你好”"}}
    source = 'def f(): """返回它。"""; return 1  # 中文\n\n\ndef g():\n\t"""说“你好”"""\n\treturn 2\n'
    english = switch(source, texts, "en")
    assert english.source == 'def f(): """Return it."""; return 1  # 中文\n\n\ndef g():\n\t"""Say "hi\\""""\n\treturn 2\n'
    assert drill_texts.docstrings(english.source) == texts["en"]
    assert switch(english.source, texts, "zh_CN").source == source


def test_a_docstring_split_in_parts_or_with_comments_inside_is_kept():
    texts = {"en": {"f": "ab"}, "zh_CN": {"f": "甲乙"}}
    split = 'def f():\n    ("a"  # one\n     "b")\n    return 1\n'
    done = switch(split, texts, "zh_CN")
    assert done.source == split and done.kept == ("f",)


def test_the_backups_are_ignored_by_git_and_the_english_is_not():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    backup = f"exercises/{BACKUP_DIR}/{DRILL}.py"
    assert subprocess.run(["git", "check-ignore", "--no-index", "-q", backup], cwd=REPO).returncode == 0
    kept = f"exercises/{ENGLISH_FILE}"  # the course's English: travels with the learner's commits
    assert subprocess.run(["git", "check-ignore", "--no-index", "-q", kept], cwd=REPO).returncode == 1


def test_a_file_that_cannot_be_written_is_said_and_the_others_switch(clone, capsys, monkeypatch):
    write = stub_language._write_bytes

    def refuse_one(path: Path, data: bytes, mode: int) -> None:
        if path == clone / f"{DRILL}.py":
            raise PermissionError(13, "Permission denied")
        write(path, data, mode)

    monkeypatch.setattr(stub_language, "_write_bytes", refuse_one)
    before = (clone / f"{DRILL}.py").read_bytes()
    code, out = stubs(clone, "zh_CN", capsys)
    assert code == stub_language.EXIT_NOT_ALL and "one_hot.py：未切换：Permission denied" in out
    assert (clone / f"{DRILL}.py").read_bytes() == before and "43 个已切换" in out


def test_a_course_whose_stubs_were_switched_is_not_released(tmp_path, capsys):
    from grader.authoring import release

    course = tmp_path / "course"  # a course author's checkout: its exercises/ are the course's English
    course.mkdir()
    (course / "tests").symlink_to(REPO / "tests")
    shutil.copytree(REPO / "exercises", course / "exercises", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    shutil.copy(REPO / "course.toml", course / "course.toml")
    loaded = syllabus.load(course)
    assert stubs(course / "exercises", "zh_CN", capsys)[0] == 0
    with pytest.raises(release.ReleaseError, match="torchdrill stubs --lang en"):
        release._check_english(course, loaded)
    assert stubs(course / "exercises", "en", capsys)[0] == 0
    release._check_english(course, loaded)


def test_a_translation_the_course_improved_since_still_switches(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "tests").symlink_to(REPO / "tests")
    shutil.copytree(REPO / "locales", course / "locales")
    shutil.copy(REPO / "course.toml", course / "course.toml")
    folder = course / "exercises" / "tensors"
    folder.mkdir(parents=True)
    (folder / "one_hot.py").write_bytes((REPO / "exercises" / f"{DRILL}.py").read_bytes())
    english = (folder / "one_hot.py").read_bytes()

    def run(lang: str) -> int:
        code = main(["stubs", "--course", str(course), "--submission", str(course / "exercises"), "--lang", lang])
        capsys.readouterr()
        return code

    assert run("zh_CN") == 0
    toml = course / "locales" / "zh_CN" / f"{DRILL}.toml"
    old = inspect.cleandoc(str(ZH.module)).splitlines()[0]
    toml.write_text(toml.read_text(encoding="utf-8").replace(old, "用 ``scatter_`` 构造独热编码。"), encoding="utf-8")
    assert run("zh_CN") == 0  # the old translation in the file is the course's: it becomes the new one
    assert "用 ``scatter_`` 构造独热编码。" in (folder / "one_hot.py").read_text(encoding="utf-8")
    toml.write_text(toml.read_text(encoding="utf-8").replace("构造", "做出"), encoding="utf-8")
    assert run("en") == 0
    assert (folder / "one_hot.py").read_bytes() == english


def test_a_chinese_file_with_no_english_kept_is_said_and_left_as_it_is(tmp_path, capsys):
    folder = tmp_path / "exercises"
    (folder / "tensors").mkdir(parents=True)  # a Chinese handout released before the English was kept
    (folder / f"{DRILL}.py").write_text(handout_source(REPO, DRILL, "zh_CN"), encoding="utf-8")
    assert stub_language.english_from(handout_source(REPO, DRILL, "zh_CN"), [stub_language.texts_of(ZH)]) == {}
    before = (folder / f"{DRILL}.py").read_bytes()
    code, out = stubs(folder, "en", capsys)
    assert code == stub_language.EXIT_NOT_ALL and "one_hot" in out and "1 not switched" in out
    assert (folder / f"{DRILL}.py").read_bytes() == before
