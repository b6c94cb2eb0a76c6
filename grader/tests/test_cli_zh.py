"""The learner's commands in Simplified Chinese (``--lang zh_CN`` or ``$TORCHDRILL_LANG``):
their lines, errors, help, the course's titles and the drills' hints; English unchanged."""

from __future__ import annotations

import pytest

from grader.cli import main
from grader.core import drill_texts, syllabus
from grader.core.stubs import handout_source
from grader.learner.hint import fill
from grader.tests import warm
from grader.tests.grading import REPO

COURSE = syllabus.load(REPO)


def _cells(text: str) -> int:
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)


def test_list_speaks_chinese_with_the_course_and_topic_titles(tmp_path, capsys):
    assert main(["list", "--course", str(REPO), "--results", str(tmp_path / "none.json"),
                 "--submission", str(tmp_path), "--lang", "zh_CN"]) == 0
    out = capsys.readouterr().out
    assert drill_texts.course_title(COURSE, "zh_CN") in out
    tensors = drill_texts.topic_title(COURSE, "zh_CN", "tensors")
    assert tensors != COURSE.topics[0].title and tensors in out
    assert "未检查" in out and "进度：" in out and "下一个：torchdrill check contiguity" in out
    assert "还没有结果" in out
    for english in ("not checked", "progress:", "next:", "no results yet", COURSE.topics[0].title):
        assert english not in out


def test_list_in_english_is_unchanged(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TORCHDRILL_LANG", "zh_CN")
    assert main(["list", "--course", str(REPO), "--results", str(tmp_path / "none.json"),
                 "--submission", str(tmp_path), "--lang", "en"]) == 0  # --lang wins over the variable
    out = capsys.readouterr().out
    assert COURSE.title in out and COURSE.topics[0].title in out
    assert "not checked" in out and "progress: 0 of" in out and "next: torchdrill check contiguity" in out
    assert "未检查" not in out


def test_hint_speaks_chinese_from_the_environment(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TORCHDRILL_LANG", "zh_CN")
    drill = COURSE.drill("tensors/contiguity")
    said = drill_texts.hints(COURSE, "zh_CN", drill)
    args = ["hint", "contiguity", "--course", str(REPO), "--submission", str(tmp_path)]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "tensors/contiguity：第 1 条提示，共 3 条" in first and "还有 2 条：torchdrill hint contiguity" in first
    assert "".join(said[0].split())[:20] in "".join(first.split())
    assert main(args) == 0  # the second hint: the same one in either language (the state is shared)
    assert "第 2 条提示" in capsys.readouterr().out
    monkeypatch.setenv("TORCHDRILL_LANG", "en")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "tensors/contiguity: hint 3 of 3" in out and drill.hints[2][:30] in out
    assert "that was the last hint" in out


def test_translated_hints_fall_back_to_english(tmp_path):
    drill = syllabus.Drill("tensors/one_hot", "tensors", ("first", "second"))
    course = syllabus.Course(tmp_path, "A course", (syllabus.Topic("tensors", "Tensors", (drill,)),))
    assert drill_texts.hints(course, "zh_CN", drill) == ("first", "second")  # no translation
    assert drill_texts.course_title(course, "zh_CN") == "A course"
    assert drill_texts.topic_title(course, "zh_CN", "tensors") == "Tensors"
    where = tmp_path / "locales" / "zh_CN"
    (where / "tensors").mkdir(parents=True)
    (where / "tensors" / "one_hot.toml").write_text('hints = ["只有一条"]\n', encoding="utf-8")
    assert drill_texts.hints(course, "zh_CN", drill) == ("first", "second")  # not all of them
    (where / "tensors" / "one_hot.toml").write_text('hints = ["第一条", "第二条"]\n', encoding="utf-8")
    assert drill_texts.hints(course, "zh_CN", drill) == ("第一条", "第二条")
    assert drill_texts.hints(course, "en", drill) == ("first", "second")
    (where / "tensors" / "one_hot.toml").write_text('hints = ["half written', encoding="utf-8")
    assert drill_texts.hints(course, "zh_CN", drill) == ("first", "second")
    (where / "course.toml").write_text('title = "一门课"\n[topics]\ntensors = "张量"\n', encoding="utf-8")
    assert drill_texts.course_title(course, "zh_CN") == "一门课"
    assert drill_texts.topic_title(course, "zh_CN", "tensors") == "张量"
    assert drill_texts.topic_title(course, "zh_CN", "other") == "other"


def test_a_chinese_hint_wraps_at_the_terminal_width():
    text = "先验证再构建：float 或 bool 的标签、负的标签、>= num_classes 的标签，以及从空张量推断 C，都是 ValueError。" * 2
    lines = fill(text, 40, "1. ").splitlines()
    assert len(lines) > 3 and all(_cells(line) <= 42 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == ("1." + text).replace(" ", "")
    assert not any(line.strip().startswith(("，", "。")) for line in lines)
    assert "num_classes" in "\n".join(lines)  # a Latin word stays whole
    english = "an english hint that is long enough to wrap around the width of the terminal"
    assert fill(english, 40, "2. ") == "2. an english hint that is long enough\n   to wrap around the width of the\n   terminal"


def test_an_unknown_drill_is_refused_in_chinese(capsys):
    assert main(["check", "onehot", "--course", str(REPO), "--lang", "zh_CN"]) == 2
    err = capsys.readouterr().err
    assert "torchdrill: 未知的练习 onehot：你是指 one_hot 吗？" in err


def test_a_language_the_course_does_not_speak_is_refused(capsys):
    assert main(["list", "--course", str(REPO), "--lang", "fr"]) == 2
    assert "--lang 'fr'" in capsys.readouterr().err


@pytest.mark.parametrize("command, words", [
    ("list", "按课程顺序"), ("check", "最小失败输入"), ("watch", "每保存一次"), ("hint", "逐条显示"),
    ("grade", "为一份提交评分"),
])
def test_help_speaks_chinese(capsys, command, words):
    with pytest.raises(SystemExit):
        main([command, "--help", "--lang", "zh_CN"])
    out = capsys.readouterr().out
    assert words in out and "--course" in out


def test_the_top_help_speaks_chinese(capsys, monkeypatch):
    monkeypatch.setenv("TORCHDRILL_LANG", "zh_CN")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "用基于性质的测试评分的 PyTorch 练习" in out and "显示某个练习的下一条提示" in out


def test_check_of_a_stub_speaks_chinese(tmp_path):
    folder = tmp_path / "sub" / "tensors"
    folder.mkdir(parents=True)
    (folder / "one_hot.py").write_text(handout_source(REPO, "tensors/one_hot"))  # the stub, whatever exercises/ holds
    proc = warm.run(["-m", "grader", "check", "one_hot", "--course", str(REPO), "--submission",
                     str(tmp_path / "sub"), "--out", str(tmp_path / "reports"), "--lang", "zh_CN"], REPO, 300)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "尚未作答：请替换" in out and "快速检查" in out and "卡住了？torchdrill hint one_hot" in out
    assert "Not attempted yet" not in out and "quick check" not in out and "stuck?" not in out


def test_a_missing_submission_is_refused_in_chinese(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "nope"), "--course", str(REPO), "--lang", "zh_CN"]) == 2
    err = capsys.readouterr().err
    assert "提交" in err and "不存在" in err and "does not exist" not in err


def test_an_instructor_command_speaks_chinese(tmp_path, capsys):
    assert main(["extend", str(tmp_path), "alice", "hw1", "--days", "2", "--course", str(REPO),
                 "--lang", "zh_CN"]) == 2
    err = capsys.readouterr().err
    assert "没有成绩册：请先运行 grade-all" in err
    assert main(["extend", str(tmp_path), "alice", "hw1", "--days", "2", "--course", str(REPO),
                 "--lang", "en"]) == 2
    assert "run grade-all first" in capsys.readouterr().err


def test_argparse_errors_speak_chinese_and_english_stays_argparse(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["check", "--course", str(REPO), "--lang", "zh_CN"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "用法：torchdrill check" in err and "torchdrill check：错误：缺少以下参数：NAME" in err
    with pytest.raises(SystemExit):
        main(["check", "--course", str(REPO), "--lang", "en"])
    err = capsys.readouterr().err
    assert "usage: torchdrill check" in err
    assert "torchdrill check: error: the following arguments are required: NAME" in err
