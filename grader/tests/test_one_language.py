"""Every reader gets one language, whole (docs/DESIGN.md, rule 3): the self-check.

For every outcome kind (``every_outcome``: made by the engine's own code, every message
it can give), and every drill's failure phrases as real gradings say them (the mutant and
do-nothing corpora's rounds, shared with ``test_mutants`` and ``test_lazy``), the
learner's views are rendered in Chinese and in English: ``torchdrill check``'s output,
the notebook's ``check`` (its own last line: on the every-outcome results), the score
table ``torchdrill grade -v`` prints, the student report and Gradescope's output. The
Chinese view may hold no English prose outside code, names, values and tensors, the
English view no Chinese (``grader.tests.one_language``: the detector and its short
allowlist). No grading is made here but the shared ones: each view renders results a
test already has. Beside it, every message of the engine's catalogs and every phrase of
the course's translations is read the same way, and each label that a Chinese learner
once read in English is looked for by name.
"""

from __future__ import annotations

import contextlib
import gettext
import io
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from babel.messages.pofile import read_po

from grader import cli
from grader.core import drill_texts, i18n, results_json, syllabus
from grader.core.i18n import Lang, Message
from grader.gradescope import results as gradescope_results
from grader.learner import check as check_module
from grader.learner import notebook
from grader.learner.place import Place
from grader.reports import student_report, table
from grader.tests import every_outcome, test_lazy, test_mutants
from grader.tests.grading import REPO
from grader.tests.one_language import course_names, english_prose, page_text, stray_chinese, values_of
from grader.tests.shared import shared

# ------------------------------------------------------------------ the results rendered

def _outcomes(factory: pytest.TempPathFactory) -> Any:
    return shared(factory, "every-outcome", every_outcome.every_outcome)


def _round(graded: Callable[[int, pytest.TempPathFactory], Any], k: int) -> Callable[[pytest.TempPathFactory], Any]:
    return lambda factory: graded(k, factory)


SOURCES: dict[str, Callable[[pytest.TempPathFactory], Any]] = {
    "every outcome": _outcomes,
    **{f"mutants round {k}": _round(test_mutants.graded_round, k)
       for k in range(max(len(paths) for paths in test_mutants.BY_DRILL.values()))},
    **{f"do-nothing round {k}": _round(test_lazy.graded_round, k)
       for k in range(max(len(paths) for paths in test_lazy.BY_DRILL.values()))},
}


def _one(results: Any, drill: str) -> Any:
    """``results`` with exercise ``drill`` alone, as ``run_check`` gives it."""
    return results_json.rescore(cast(results_json.Results, {
        **results, "exercises": [ex for ex in results["exercises"] if ex["id"] == drill]}))


# ------------------------------------------------------------------ the views

COURSE = syllabus.load(REPO)


def check_view(results: Any, drill: str, lang: Lang, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``torchdrill check DRILL`` prints in ``lang`` for ``results`` (the grading and
    the record left out: ``grader.learner.check.check`` with ``run_check`` answering them)."""
    monkeypatch.setattr(check_module, "run_check", lambda *args, **kwargs: _one(results, drill))
    out = io.StringIO()
    where = Place(REPO, COURSE, folder / "exercises", folder / "reports" / "results.json")
    with i18n.speaking(lang):
        check_module.check(where, drill, table.make_console(out), record=False)
    return out.getvalue()


def notebook_view(results: Any, drill: str, lang: Lang, monkeypatch: pytest.MonkeyPatch,
                  capsys: pytest.CaptureFixture[str]) -> str:
    """What a notebook's ``check(DRILL)`` cell prints for ``results``, in ``lang``."""
    monkeypatch.setattr(notebook, "run_check", lambda *args, **kwargs: _one(results, drill))
    monkeypatch.setenv(i18n.LANG_ENV, lang.value)
    capsys.readouterr()
    notebook.check(drill, course=REPO)
    return capsys.readouterr().out


def table_view(results: Any, lang: Lang) -> str:
    """The score table with every failure explained (``torchdrill grade -v``, ``tox -e grade``)."""
    out = io.StringIO()
    with i18n.speaking(lang):
        table.render(results, file=out, verbose=True, course=REPO)
    return out.getvalue()


def report_view(results: Any, lang: Lang) -> str:
    """The words a reader of the student report reads."""
    return page_text(student_report.render_html(results, REPO, lang))


def gradescope_view(results: Any, lang: Lang) -> str:
    """What a student reads on Gradescope: the summary and every test's output."""
    answer = gradescope_results.gradescope(results, lang, REPO)
    return "\n".join([answer["output"], *(t["output"] for t in answer["tests"])])


def problems(text: str, results: Any, lang: Lang, values: set[str] | None = None) -> list[str]:
    """What in ``text`` (a view of ``results`` in ``lang``) is in the other language."""
    values = values_of(results, REPO) if values is None else values
    if lang is Lang.ZH_CN:
        return sorted(set(english_prose(text, values, course_names(REPO))))
    return sorted(set(stray_chinese(text, values)))


# ------------------------------------------------------------------ the self-check

@pytest.mark.parametrize("lang", list(Lang))
@pytest.mark.parametrize("source", list(SOURCES))
def test_every_view_speaks_one_language(source, lang, tmp_path_factory, tmp_path, monkeypatch, capsys):
    results = SOURCES[source](tmp_path_factory)
    views = {"report": report_view(results, lang), "gradescope": gradescope_view(results, lang),
             "table": table_view(results, lang)}
    for ex in results["exercises"]:
        views[f"check {ex['id']}"] = check_view(results, ex["id"], lang, tmp_path, monkeypatch)
        if source == "every outcome":  # the notebook prints what check prints, then a line of its own
            views[f"notebook {ex['id']}"] = notebook_view(results, ex["id"], lang, monkeypatch, capsys)
    values = values_of(results, REPO)
    found = {name: problems(text, results, lang, values) for name, text in views.items()}
    assert {name: f for name, f in found.items() if f} == {}


# ------------------------------------------------------------------ the labels, one by one

# What a Chinese learner read in English in ``check``'s output (issue 38), and what they read now.
LABELS = {
    "call": (r"^\s*call: ", "调用："),
    "returned": (r"\breturned\b", "返回"),
    "shown below as got": (r"shown below as got", "即下方的实际值"),
    "expected": (r"^\s*expected: ", "期望值："),
    "got": (r"^\s*got: ", "实际值："),
    "diff": (r"^\s*diff: ", "差异："),
    "raised": (r"\braised\b", "抛出"),
    "traceback": (r"Traceback \(student code only\):", "回溯（只列出你的代码）："),
    "result": (r"\bresult[:：]", "结果："),
    "tensor of shape": (r"tensor of shape", "张量，形状"),
    "elements differ": (r"elements differ", "个元素中有"),
    "forbidden use": (r"which this drill forbids|Instead:", "而这个练习禁止使用它。请改为："),
    "forbidden hint": (r"make a zeros tensor of shape", "创建形状为 (*labels.shape, C) 的全零张量"),
    "import error": (r"importing it raised", "导入时抛出 ModuleNotFoundError"),
    "timed out call": (r"^\s+timed out$", "\n      超时\n"),  # once more under the call, with no English copy
    "left out": (r"left out", "未传入"),
}


@pytest.fixture(scope="module")
def every_check(tmp_path_factory) -> dict[Lang, str]:
    """``check``'s output for every drill of the every-outcome results, in each language."""
    results = _outcomes(tmp_path_factory)
    results = {**results, "exercises": [*results["exercises"], _with_defaults_left_out()]}
    said = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for lang in Lang:
            out = io.StringIO()
            for ex in results["exercises"]:
                monkeypatch.setattr(check_module, "run_check", lambda *args, ex=ex, **kwargs: _one(results, ex["id"]))
                folder = tmp_path_factory.mktemp("check")
                (folder / "exercises").mkdir()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    code = cli.main(["check", ex["id"], "--course", str(REPO), "--submission",
                                     str(folder / "exercises"), "--out", str(folder / "reports"), "--lang", lang.value])
                assert code in (0, 1), out.getvalue()[-2000:]
            said[lang] = out.getvalue()
    return said


def _with_defaults_left_out() -> dict[str, Any]:
    """A grad_scaler property lost on an input whose description leaves a default out, as
    its test writes it (``scaled_step(batch of 2, ...) (max_norm, ... left out: the default)``)."""
    case = ("scaled_step(batch of 2, sgd, scale=65536.0, growth_tracker=1998, max_norm=None, growth_factor=2.0, "
            "backoff_factor=0.5, growth_interval=2000) (max_norm, growth_factor, backoff_factor, growth_interval "
            "left out: the default)")
    said = Message("{what}: Tensor-likes are not close! {summary}",
                   {"what": f"{case}: parameter 0.bias after the step",
                    "summary": "(1 of 1 elements differ; first at index (0,))"})
    test = results_json.TestRecord("speed/grad_scaler", "test_scaled_step_matches_a_grad_scaler_loop", "failed", weight=4,
                      message=str(said), message_id=said.to_json())
    built = results_json.build("/sub", {"speed/grad_scaler": results_json.ExerciseInfo("speed/grad_scaler", 15)}, [test])
    return dict(built["exercises"][0])


@pytest.mark.parametrize("label", list(LABELS))
def test_check_says_each_label_in_the_learners_language(label, every_check):
    english, chinese = LABELS[label]
    assert re.search(english, every_check[Lang.EN], re.M), f"the English check says {english}"
    assert not re.search(english, every_check[Lang.ZH_CN], re.M), f"{label} is still English"
    assert chinese in every_check[Lang.ZH_CN]


def test_a_label_put_back_in_english_is_found(tmp_path_factory, tmp_path, monkeypatch):
    """The self-check fails when one translation goes missing: here ``call:``, as if the
    catalog had lost it (the detector on the very view the self-check renders)."""
    results = _outcomes(tmp_path_factory)
    assert problems(check_view(results, "tensors/one_hot", Lang.ZH_CN, tmp_path, monkeypatch),
                    results, Lang.ZH_CN) == []
    real = i18n.translator
    forgetful = i18n.Translator(Lang.ZH_CN, _Forgetful(real(Lang.ZH_CN).catalog, "call: {call}"))
    monkeypatch.setattr(i18n, "translator", lambda lang=Lang.EN: forgetful if Lang(lang) is Lang.ZH_CN else real(lang))
    found = problems(check_view(results, "tensors/one_hot", Lang.ZH_CN, tmp_path, monkeypatch),
                     results, Lang.ZH_CN)
    assert found and all(f.startswith("'call'") for f in found), found


class _Forgetful(gettext.NullTranslations):
    """A catalog that has lost one message's translation (its English comes back)."""

    def __init__(self, catalog: gettext.NullTranslations, lost: str):
        super().__init__()
        self.catalog, self.lost = catalog, lost

    def gettext(self, message: str) -> str:
        return message if message == self.lost else self.catalog.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.catalog.ngettext(singular, plural, n)


# ------------------------------------------------------------------ the detector itself

@pytest.mark.parametrize("text", [
    "call: one_hot(<int64 tensor of shape (2,)>, 3)",
    "形状为 ()、num_classes=1 的合法标签上的 one_hot（beside the bool labels）",
    "result：dtype 不同：得到 torch.float32，期望 torch.int64",
    "张量不够接近！(4 of 4 elements differ; first at index (0, 0))",
    "  returned (131072.0, 0, True)",
    "one_hot() 调用了 F.one_hot，而这个练习禁止使用它。请改为：make a zeros tensor",
])
def test_the_detector_finds_english_prose(text):
    assert english_prose(text)


@pytest.mark.parametrize("text", [
    "形状为 (2,)、num_classes=3 的标签上的 one_hot：dtype 不同：得到 torch.float32，期望 torch.int64",
    "inputs 和 targets 保持原样",
    "调用：one_hot(<int64 张量，形状 (2,)>, 3)",
    "卡住了？torchdrill hint one_hot  （还剩 3 条提示，共 3 条）",
    "环形全归约（ring all-reduce）：NCCL 和 Horovod 如何在多块 GPU 上对梯度求和。",
    "用 `x.clone()` 而不是原地修改：ValueError、GradScaler、CUDA 都是名字",
    "请运行 torchdrill stubs --lang zh_CN 切换文档字符串",
    "assert torch.float32 == torch.int64\n +  where torch.float32 = tensor([1.]).dtype",
])
def test_the_detector_lets_code_names_and_glosses_be(text):
    assert english_prose(text) == []


def test_values_are_left_as_they_are():
    """What the student's code said is theirs, in every language: taken out before looking."""
    tb = '  File "x.py", line 6, in gather\n    raise RuntimeError("my own mistake here")'
    text = f"gather() 抛出了 RuntimeError：my own mistake here\n回溯（只列出你的代码）：\n{tb}"
    assert english_prose(text, [tb])
    assert english_prose(text, [tb, "my own mistake here"]) == []


def test_chinese_in_an_english_view_is_found():
    assert stray_chinese("call: one_hot(<int64 tensor of shape (2,)>, 3)\n  返回 <float32 tensor>")
    assert stray_chinese("labels are 标签", ["labels are 标签"]) == []


# ------------------------------------------------------------------ every message, every phrase

_PLACEHOLDERS = re.compile(r"\{[^{}]*\}|%\(\w+\)[sdrf]|<[^>]+>")


def test_every_message_of_the_engine_reads_chinese():
    """Every translated message of the engine's catalogs (placeholders and markup taken out)."""
    found = []
    for domain in i18n.DOMAINS:
        with open(i18n.LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / f"{domain}.po", "rb") as fp:
            for m in read_po(fp):
                strings = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
                for said in strings if m.id else ():
                    found += [f"{domain}: {f}" for f in english_prose(_PLACEHOLDERS.sub(" \x00 ", str(said or "")),
                                                                        names=course_names(REPO))]
    assert found == []


def test_every_phrase_of_the_course_reads_chinese():
    """Every drill's and the course's failure phrases, property titles and hints in Chinese."""
    found = []
    for path in sorted((REPO / "locales" / "zh_CN").rglob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        texts = [*data.get("phrases", {}).values(), *data.get("properties", {}).values(), *data.get("hints", [])]
        found += [f"{path.relative_to(REPO)}: {f}" for text in texts
                  for f in english_prose(_PLACEHOLDERS.sub(" \x00 ", text), names=course_names(REPO))]
    assert found == []


def test_every_forbidden_api_says_what_to_do_instead_in_chinese():
    """Each drill's ``forbid=`` hints (its test module's marker) have a translation among
    the drill's phrases: the forbidden-use message reads Chinese whole."""
    from grader.tests.test_scan import SPECS

    missing = [f"{drill}: {hint}" for drill, spec in SPECS.items() for hint in spec.values()
               if drill_texts.phrase(hint, (drill_texts.load(REPO, "zh_CN", drill) or drill_texts.DrillTexts()).phrases)
               is None]
    assert missing == []


def test_a_phrase_full_of_a_students_words_costs_little():
    """A course phrase quotes what the code said (an exception's text, a repr): a hostile
    answer's text full of the phrases' own words, cut every way, is still said at once."""
    import time

    phrases = {**(drill_texts.load(REPO, "zh_CN", "speed/grad_scaler") or drill_texts.DrillTexts()).phrases,
               **drill_texts.course_phrases(REPO, "zh_CN")}
    hostile = "scaled_step(batch of " + ", scale=(, growth_tracker=" * 150 + ") (a left out: the default)"
    started = time.perf_counter()
    for n in (1_000, 1_400, 4_000):
        drill_texts.phrase(hostile[:n], phrases)
    assert time.perf_counter() - started < 10
