"""Similarity evidence: disguised copies are flagged and independent correct solutions are
not, on every drill (no grading: the analysis alone), also in a class of 5 where the
solutions follow the idioms the docstrings dictate, and ``grade-all`` on a small class
shows both kinds of evidence in class.html and similarity.csv.

The corpus of independent solutions, ``data/similarity/<drill>/<style>.py``, was written
from the stubs' docstrings alone (never reference/), each in its own style; every file
scores full marks (``torchdrill check DRILL --submission``)."""

from __future__ import annotations

import csv
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.classroom import similarity
from grader.classroom.dictated_code import dictated_by, dictated_mask
from grader.core.stubs import stub_source
from grader.intake import notebooks
from grader.reports import similarity_view
from grader.tests import warm
from grader.tests.classroom import disguise, drills, padded, with_secret
from grader.tests.grading import REPO
from grader.tests.shared import shared

INDEPENDENT = REPO / "grader" / "tests" / "data" / "similarity"  # correct solutions written apart
ONLY = ["tensors/one_hot", "tensors/contiguity"]
CAROL = {"tensors/one_hot": "flat_scatter", "tensors/contiguity": "while_loop"}  # her style of each


def independent(drill: str) -> dict[str, str]:
    """The corpus's independent solutions of ``drill``: style -> code."""
    return {p.stem: p.read_text() for p in sorted((INDEPENDENT / drill).glob("*.py"))}


def corpus() -> list[str]:
    return sorted({p.parent.relative_to(INDEPENDENT).as_posix() for p in INDEPENDENT.rglob("*.py")})


def carol(drill: str) -> str:
    return (INDEPENDENT / drill / f"{CAROL[drill]}.py").read_text()


def reference(drill: str) -> str:
    return (REPO / "reference" / f"{drill}.py").read_text()


def stub(drill: str) -> str:
    return stub_source((REPO / "exercises" / f"{drill}.py").read_text())


def pair(found: dict[str, Any], a: str, b: str) -> dict[str, Any] | None:
    return next((p for p in found["top"] if {p["a"], p["b"]} == {a, b}), None)


@pytest.mark.parametrize("drill", drills())
def test_a_disguised_copy_is_flagged_and_an_independent_solution_is_not(drill):
    code = {"original": reference(drill), "copy": disguise(reference(drill), seed=3)}
    code.update({f"independent-{style}": text for style, text in independent(drill).items()})
    found = similarity.analyse({sid: {"exercises": []} for sid in code},
                               {sid: {f"{drill}.py": text} for sid, text in code.items()},
                               {drill: stub(drill)}, drills=[drill])["code"][drill]
    copied = pair(found, "original", "copy")
    assert copied is not None and copied["flagged"], f"{drill}: {copied}"
    assert copied["score"] >= similarity.DEFAULT_THRESHOLD + 0.1  # a margin, not a coin toss
    assert not [p for p in found["listed"] if p["flagged"] and {p["a"], p["b"]} != {"original", "copy"}]


def _class_of_five(drill: str) -> dict[str, str]:
    """The reference, a disguised copy of it, the corpus's independent solutions, and
    disguised copies to make 5: ``X~copy`` is a copy of ``X``."""
    ref = reference(drill)
    code = {"reference": ref, "reference~copy": disguise(ref, seed=3)}
    styles = independent(drill)
    code.update(list(styles.items())[:3])
    first = next(iter(styles))
    if len(code) < 5:
        code[f"{first}~copy"] = disguise(styles[first], seed=5)
    if len(code) < 5:
        code["reference~copy2"] = disguise(ref, seed=11)
    return code


@pytest.mark.parametrize("drill", corpus())
def test_in_a_class_of_five_independent_solutions_are_not_flagged_and_copies_are(drill):
    """Solutions written from the docstring use the idioms it dictates
    (``masked_fill(mask == 0, -1e9)``, ``scatter_(-1, labels.unsqueeze(-1), 1)``, its
    ValueError guards): in a class too small for "shared by the class" to mean anything,
    what the stub dictates must not make them look copied (it counts
    ``DICTATED_WEIGHT``), and a disguised copy still is flagged."""
    code = _class_of_five(drill)
    assert len(code) == 5 and len(code) < similarity.COMMON_MIN
    found = similarity.analyse({sid: {"exercises": []} for sid in code},
                               {sid: {f"{drill}.py": text} for sid, text in code.items()},
                               {drill: stub(drill)}, drills=[drill])["code"][drill]
    assert found["common_fingerprints"] == 0
    scores = {frozenset((p["a"], p["b"])): p for p in found["listed"]}
    for a, b in itertools.combinations(sorted(code), 2):
        p = scores.get(frozenset((a, b)), {"score": 0.0, "flagged": False})
        if a.split("~")[0] == b.split("~")[0]:
            assert p["flagged"] and p["score"] >= similarity.DEFAULT_THRESHOLD + 0.1, (a, b, p["score"])
        else:
            assert not p["flagged"] and p["score"] < similarity.DEFAULT_THRESHOLD, (a, b, p["score"])


def test_what_the_docstring_dictates_is_read_from_it():
    spec = dictated_by(stub("attention/attention"))
    assert spec is not None and "ValueError" in spec.exceptions
    assert {"masked_fill", "softmax", "tril", "arange"} <= spec.names
    assert similarity.filtered("scores.masked_fill(mask == 0, -1e9)")[0] in spec.snippets
    code = ("def f(scores, mask, n):\n    if n < 0:\n        raise ValueError('n')\n"
            "    scores = scores.masked_fill(mask == 0, -1e9)\n    total = 0\n"
            "    for i in range(n):\n        total += i * i\n    return scores * total\n")
    text, offsets = similarity.filtered(code)
    mask = dictated_mask(code, text, offsets, spec)
    dictated = "".join(c for c, m in zip(text, mask) if m)
    assert "ifV<0:raiseValueError" in dictated and "V.V(V==0,-1e9)" in dictated
    assert "forVinrange(V):V+=V*V" in "".join(c for c, m in zip(text, mask) if not m)
    assert dictated_by(None) is None and dictated_by("def (") is None


def test_a_signature_without_its_annotations_is_the_stubs_too():
    stub_code = stub("tensors/one_hot")
    bare = similarity.canonical("import torch\n\ndef one_hot(labels, num_classes=-1):\n    return labels\n")
    text = similarity.filtered(bare)[0]
    assert text.startswith("importtorchdefF(V,V=-1):")
    head = similarity.kgram_hashes(text)[:len("importtorchdefF(V,V=-1):") - similarity.K + 1]
    assert np.isin(head, similarity.stub_kgrams(stub_code)).all()
    assert not np.isin(head, similarity.all_kgrams(similarity.canonical(stub_code))).all()


def test_a_pair_says_how_much_of_its_match_the_docstring_dictates():
    drill = "tensors/one_hot"
    code = _class_of_five(drill)
    found = similarity.analyse({sid: {"exercises": []} for sid in code},
                               {sid: {f"{drill}.py": text} for sid, text in code.items()},
                               {drill: stub(drill)}, drills=[drill])
    copied = pair(found["code"][drill], "reference", "reference~copy")
    assert copied is not None and 0.5 < copied["dictated"] <= 1
    assert found["settings"]["dictated_weight"] == similarity.DICTATED_WEIGHT
    rows = similarity_view.csv_rows(found)
    assert any("of them dictated by the docstring" in r["detail"] for r in rows if r["evidence"] == "code")


def test_hashes_are_the_same_in_every_process():
    code = reference("tensors/one_hot")
    here = similarity.kgram_hashes(similarity.filtered(code)[0]).tolist()
    there = subprocess.run([sys.executable, "-c", "from grader.classroom import similarity as s; "
                            f"print(s.kgram_hashes(s.filtered({code!r})[0]).tolist())"],
                           capture_output=True, text=True, check=True, cwd=REPO, env={"PYTHONHASHSEED": "7"})
    assert here and str(here) == there.stdout.strip()


def test_what_the_stub_gives_and_what_most_share_is_no_evidence():
    drill = "tensors/one_hot"
    only_stub = stub(drill).replace("raise NotImplementedError", "return labels", 1)
    found = similarity.code_pairs(drill, {"a": similarity.canonical(only_stub),
                                          "b": similarity.canonical(only_stub.replace("labels", "x"))},
                                  similarity.canonical(stub(drill)))
    assert not found["top"] or not any(p["flagged"] for p in found["top"])
    # in a class of 12, code 11 of them share is common knowledge, not copying
    same = {f"s{i:02d}": similarity.canonical(disguise(reference(drill), seed=i)) for i in range(11)}
    same["odd"] = similarity.canonical(carol(drill))
    found = similarity.code_pairs(drill, same, similarity.canonical(stub(drill)))
    assert found["common_fingerprints"] > 0 and found["flagged"] == 0


# ------------------------------------------------------------------ bounds

def test_what_similarity_reads_is_bounded_per_file_and_per_submission():
    most, whole = similarity.COMPARED_FILE_BYTES, similarity.COMPARED_SUBMISSION_BYTES
    assert (most, whole) == (64 * 1024, 512 * 1024)
    assert similarity.within_bounds({"a": most, "b": 10}) == {}  # exactly at the bound: read
    assert similarity.within_bounds({"a": most + 1, "b": 10}) == {"a": "file"}
    assert similarity.within_bounds({f"d{i}": whole // 8 for i in range(8)}) == {}  # exactly: read
    # ten files under the bound a file has, over the one a submission has together: the
    # largest are left out until the rest fit
    sizes = {f"d{i}": most - i for i in range(10)}
    left_out = similarity.within_bounds(sizes)
    assert left_out == {"d0": "submission", "d1": "submission"}
    assert sum(v for k, v in sizes.items() if k not in left_out) <= whole
    assert similarity.within_bounds({"a": most + 1, **{f"d{i}": most for i in range(9)}}) == \
        {"a": "file", "d8": "submission"}


def test_an_oversized_file_is_left_out_with_a_warning_and_the_rest_compared():
    from grader.core.i18n import Lang
    from grader.reports import class_report

    drill, other = ONLY
    code: dict[str, dict[str, str | bytes]] = {"alice": {drill: reference(drill), other: reference(other)},
            "bob": {drill: disguise(reference(drill), seed=7)},
            "carol": {drill: carol(drill), other: carol(other)},
            "dan": {drill: padded(reference(drill), 1_000_000), other: disguise(reference(other), seed=2)},
            "erin": {drill: b"\xff\xfe\x00 not text \x80\x00" * 100, other: reference(other).encode("utf-16")}}
    sources = {sid: {f"{d}.py": text.encode() if isinstance(text, str) else text for d, text in files.items()}
               for sid, files in code.items()}
    found = similarity.analyse({sid: {"exercises": []} for sid in code}, sources,
                               {d: stub(d) for d in ONLY}, drills=ONLY)
    assert found["skipped"] == [{"student": "dan", "file": f"{drill}.py", "bytes": 1_000_000, "bound": "file",
                                 "limit": 64 * 1024}]
    one_hot, contiguity = found["code"][drill], found["code"][other]
    assert one_hot["students"] == 4 and contiguity["students"] == 4  # erin's bytes are compared, as text
    copied, also = pair(one_hot, "alice", "bob"), pair(contiguity, "alice", "dan")
    assert copied is not None and copied["flagged"] and also is not None and also["flagged"]
    assert not any("dan" in (p["a"], p["b"]) for p in one_hot["listed"])
    lines = similarity_view.skipped_lines(found)
    assert lines == [f"dan: {drill}.py not compared: 976.6 KiB (1,000,000 B), over the bound of 64 KiB per file"]
    cls: Any = {sid: {"submission": sid, "score": 0, "max_score": 10, "exercises": []} for sid in code}
    page = class_report.render_html(cls, {}, REPO, similarity=found)
    section = page.split('id="similarity"')[1].split("</section>")[0]
    assert "Not compared, for their size." in section and lines[0] in section
    chinese = class_report.render_html(cls, {}, REPO, similarity=found, lang=Lang.ZH_CN)
    assert f"dan：{drill}.py 未参与比较：976.6 KiB (1,000,000 B)，超过每个文件 64 KiB 的上限" in chinese


# ------------------------------------------------------------------ in grade-all

def _class(folder: Path) -> None:
    def put(student: str, files: dict[str, str]) -> None:
        for drill, code in files.items():
            path = folder / student / f"{drill}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)

    mutant = (REPO / "grader" / "tests" / "mutants" / "tensors" / "one_hot" / "classes_is_max.py").read_text()
    put("alice", {d: reference(d) for d in ONLY})
    put("bob", {d: disguise(reference(d), seed=7) for d in ONLY})
    put("carol", {d: carol(d) for d in ONLY})
    put("dave", {"tensors/one_hot": mutant, "tensors/contiguity": padded(reference("tensors/contiguity"), 70_000)})
    put("frank", {"tensors/one_hot": disguise(mutant, seed=5) + '\nNOTE = "</pre><script>alert(1)</script>"\n'})
    cells = [("markdown", "# drills")] + [("code", carol(d)) for d in ONLY]
    (folder / "erin.ipynb").write_text(notebooks.dumps_cells(cells))  # carol's code, in a notebook


@pytest.fixture
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    def make(root: Path) -> dict[str, Any]:
        _class(root / "submissions")
        proc = warm.run(["-m", "grader", "grade-all", str(root / "submissions"), "--out", str(root / "out"),
                         "--course", str(REPO), "--workers", "1", "--only", *ONLY, "--profile",
                         "torchdrill-quick", "--no-shrink"], REPO, 600, env=with_secret())
        return {"out": str(root / "out"), "returncode": proc.returncode, "log": proc.stdout + proc.stderr}

    return shared(tmp_path_factory, "similarity-class", make)


def test_grade_all_flags_the_copies_and_not_the_independent_work(graded):
    assert graded["returncode"] == 0, graded["log"]
    out = Path(graded["out"])
    rows = list(csv.DictReader((out / "similarity.csv").open()))
    flagged = {(r["drill"], r["evidence"], frozenset((r["student_a"], r["student_b"])))
               for r in rows if r["flagged"] == "yes"}
    for drill in ONLY:
        assert (drill, "code", frozenset(("alice", "bob"))) in flagged
    assert ("tensors/one_hot", "code", frozenset(("dave", "frank"))) in flagged
    for other in ("alice", "bob"):
        assert not any(frozenset((other, "carol")) == f[2] for f in flagged)
    # erin handed in carol's code as a notebook: the same code, whatever the format
    assert ("tensors/contiguity", "code", frozenset(("carol", "erin"))) in flagged
    behaviour = [r for r in rows if r["evidence"] == "behaviour"]
    assert {frozenset((r["student_a"], r["student_b"])) for r in behaviour} == {frozenset(("dave", "frank"))}
    assert "rare wrong answer" in behaviour[0]["detail"]
    assert "similarity: " in graded["log"] and "flagged for a look" in graded["log"]
    # dave's contiguity (alice's, padded to 70,000 bytes) was graded, and not compared: said so
    assert "similarity: 1 file(s) not compared, for their size" in graded["log"]
    assert "  dave: tensors/contiguity.py not compared: 68.4 KiB (70,000 B), over the bound of 64 KiB per file" in graded["log"]
    assert not any(frozenset(("alice", "dave")) == f[2] for f in flagged)
    dave = json.loads((out / "students" / "dave" / "results.json").read_text())
    assert {e["id"]: e["status"] for e in dave["exercises"]}["tensors/contiguity"] == "passed"


def test_the_class_report_shows_the_pairs_side_by_side_escaped(graded):
    out = Path(graded["out"])
    page = (out / "class.html").read_text()
    assert 'id="similarity"' in page and 'href="#similarity"' in page
    assert 'data-a="alice" data-b="bob" data-kind="code" data-flagged="yes"' in page
    assert "<mark>" in page and "never a penalty" in page
    assert "following the spec is not copying" in page and "dictated by the docstring" in page
    assert "<script>alert(1)" not in page and "&lt;/pre&gt;&lt;script&gt;alert(1)" in page  # frank's code, escaped
    stored = json.loads((out / "similarity.json").read_text())
    assert stored["settings"]["threshold"] == similarity.DEFAULT_THRESHOLD
    erin = json.loads((out / "students" / "erin" / "results.json").read_text())
    by_id = {e["id"]: e for e in erin["exercises"]}
    assert [f["cell"] for f in by_id["tensors/contiguity"]["source"]["functions"]] == [3, 3]
    assert by_id["tensors/one_hot"]["source"]["functions"][0]["cell"] == 2


def test_a_copy_padded_with_comments_past_the_bound_is_still_compared():
    """The red team's evasion: a copied file padded past 64 KiB with comments was left out
    of the code evidence. The bound counts the code compared, without comments."""
    copy = reference("tensors/one_hot")
    padded_copy = copy + "\n" + "\n".join(f"# {'x' * 70} {i}" for i in range(2000)) + "\n"
    assert len(padded_copy.encode()) > similarity.COMPARED_FILE_BYTES
    kept, skipped = similarity.bounded_files({"a": {"tensors/one_hot.py": copy},
                                              "b": {"tensors/one_hot.py": padded_copy}},
                                             ["a", "b"], ["tensors/one_hot"], {})
    assert skipped == [] and kept["b"] == {"tensors/one_hot": padded_copy}
