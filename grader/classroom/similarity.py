"""Which submissions look copied: evidence for a person, never a penalty.

``grade-all`` puts two kinds of evidence side by side, per drill, computed here on
this machine (nothing is uploaded anywhere):

**Code.** Each student's file of the drill is written back by ``ast`` without its
docstrings (``canonical``: comments, layout and docstrings do not count), then
tokenized and filtered by copydetect
(``filter_code``: comments and whitespace dropped, every name becomes ``V``/``F``/``O``
and every string ``S``), cut into k-grams of ``K`` filtered characters and winnowed
(copydetect's ``winnow``, the algorithm MOSS uses). Fingerprints that the drill's stub
has (its signatures, with or without their annotations, and imports: ``stub_kgrams``)
are removed, and so are those most of the class shares (present in more than ``COMMON_SHARE`` of the students who attempted the
drill, once at least ``COMMON_MIN`` did: what everybody writes is no evidence).
What the drill's docstring dictates counts ``DICTATED_WEIGHT`` as much as the rest, in
a class of any size (``grader.classroom.dictated_code``): the code it shows (````spans````
and doctest lines, found in the filtered text), calls of the functions and methods that
code names (and simple statements made only of such calls and builtins), and guards
that raise an exception it names (``if ...: raise ValueError(...)``). Honest students
write what the spec spells out (``masked_fill(mask == 0, -1e9)``, ``scatter_(-1,
labels.unsqueeze(-1), 1)``, its ValueError checks); a copy also matches what it does
not. The share of each file's fingerprinted code that the other matches is weighed so
(``compare``: copydetect's ``compare_files`` with weights); the pair's score is the
smaller share (both files mostly match: a short file inside a long one is not enough). A pair is *flagged* when its
score is at least ``threshold`` and the matched code is at least ``MIN_MATCH``
filtered characters long (a matching one-liner proves nothing). The regions that
match are kept for a side-by-side view.

copydetect hashes k-grams with Python's ``hash()``, which differs from process to
process; here each k-gram's hash is a polynomial hash of its characters
(``kgram_hashes``), so the same class gives the same report every time.

**Behaviour.** From the results alone (what the gradebook holds): two students who
lost a property with the same minimal failing input *and* the same wrong output,
when few students did (at most ``rare_limit(n)``), share a rare wrong answer: a
stronger sign than overlapping tokens, since independent code rarely fails the
same way. Wrong answers most of the class shares are listed apart, as the class's
common misconceptions.

**Bounds.** What the code evidence costs grows with the size of the files (copydetect's
tokenizer reads every character, and a long file costs more than its share: one 1 MB
file made a class of 5 take 10-21 s instead of 1-2 s), so it reads at most ``COMPARED_FILE_BYTES`` of a drill file and
``COMPARED_SUBMISSION_BYTES`` of a submission's drill files together (``within_bounds``).
A file over a bound is left out of the comparison whole (never cut: a cut file is not
the student's code, and its shares would mean nothing) and listed in ``skipped``, with
the student, the file and its size, for a person to look at; the rest of the class is
compared as usual.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.classroom.dictated_code import Dictated, dictated_by, dictated_mask, filtered
from grader.core.outcomes import ERROR, FAILED
from grader.reports.counterexamples import answer_text

# Chosen on the course's own drills (short files): the reference against a disguised
# copy of it (locals renamed, neighbouring statements swapped, functions reordered,
# reformatted) scores 0.76-1.0 on every drill; the corpus of independent correct
# solutions written from the docstrings (grader/tests/data/similarity: 8 drills, 16
# files, several in the docstring's own idioms) scores at most 0.53 against the
# reference and 0.52 against each other (0.84 and 0.45 before what the docstring
# dictates was discounted: one_hot's and knn's were flagged against the reference),
# their disguised copies at least 0.81 (grader/tests/test_similarity.py).
K = 20  # filtered characters per k-gram (copydetect's noise threshold: 25, for longer files)
WINDOW = 1  # winnowing window: every k-gram kept (files are small), so any match of K is found
DEFAULT_THRESHOLD = 0.6
MIN_MATCH = 80  # filtered characters matched, at least, for a pair to be flagged
COMMON_SHARE = 0.5
COMMON_MIN = 10
TOP_PAIRS = 5  # pairs of each kind shown side by side per drill: the flagged first
MAX_LISTED = 1000  # pairs per drill listed in similarity.csv (every flagged one, up to this)
MAX_CODE_CHARS = 20_000  # of a file shown side by side
RARE_SHARE = 0.1
DICTATED_WEIGHT = 0.05  # what the stub's docstring dictates counts this much in a share
# What the code evidence reads, at most. The course's answers are far smaller: a drill file
# as handed out (docstrings included) is 7.3 KiB at most, its reference solution 2.9 KiB at
# most, so an answered file is about 10 KiB; a whole answered handout is about 205 KiB
# (34 stubs, 150 KiB, and their solutions, 54 KiB). 64 KiB is 6 times the largest answer,
# 512 KiB 2.5 times a whole answered handout. The cost grows faster than the size: a class
# of 5 (34 drills) took 1.2-1.7 s, 10-15 s with one 1 MB file, 1.1-1.2 s with it left out,
# and 4.2-4.6 s with a student at both bounds (bench/similarity.py --oversized).
COMPARED_FILE_BYTES = 64 * 2**10
COMPARED_SUBMISSION_BYTES = 512 * 2**10
_BASE = np.uint64(1_000_003)


def rare_limit(students: int) -> int:
    """At most how many students may share a wrong answer for it to count as rare."""
    return max(2, math.ceil(RARE_SHARE * students))


# ------------------------------------------------------------------ fingerprints

@dataclass
class Fingerprint:
    """What copydetect's ``compare_files`` reads of a file (its ``CodeFingerprint``), and
    the weight of each filtered character (``DICTATED_WEIGHT`` where the spec dictates it)."""

    raw_code: str
    filtered_code: str
    offsets: Any
    hashes: set[int]
    hash_idx: dict[int, list[int]]
    k: int
    token_coverage: float
    weights: Any = None
    kept: Any = None  # the characters its kept k-grams cover


def kgram_hashes(text: str, k: int = K) -> np.ndarray:
    """A 64-bit polynomial hash of every k-gram of ``text``, the same in every process."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    out = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            out = out * _BASE + codes[j:j + n]
    return out.view(np.int64)


def fingerprint(code: str, boilerplate: np.ndarray | None = None,
                spec: Dictated | None = None) -> Fingerprint:
    """``code`` fingerprinted as copydetect does, minus the ``boilerplate`` hashes, with
    what ``spec`` dictates of it weighed ``DICTATED_WEIGHT``."""
    from copydetect.utils import get_token_coverage, winnow

    text, offsets = filtered(code)
    weights = np.where(dictated_mask(code, text, offsets, spec), DICTATED_WEIGHT, 1.0) if spec \
        else np.ones(len(text))
    hashes = kgram_hashes(text)
    if len(hashes):
        hashes, idx = winnow(hashes, WINDOW, remove_duplicates=False)
    else:
        idx = np.zeros(0, dtype=np.int64)
    if boilerplate is not None and len(boilerplate) and len(hashes):
        keep = ~np.isin(hashes, boilerplate)
        hashes, idx = hashes[keep], idx[keep]
    hash_idx: dict[int, list[int]] = {}
    for h, i in zip(hashes.tolist(), idx.tolist()):
        hash_idx.setdefault(h, []).append(i)
    return Fingerprint(code, text, offsets, set(hash_idx), hash_idx, K,
                       float(get_token_coverage(hash_idx, K, len(text))), weights, _covered(idx, len(text)))


def all_kgrams(code: str) -> np.ndarray:
    """Every k-gram hash of ``code``'s filtered text (a stub's, to remove)."""
    return np.unique(kgram_hashes(filtered(code)[0]))


def stub_kgrams(stub: str) -> np.ndarray:
    """Every k-gram hash of the stub as compared (``canonical``), and of the stub without
    its type annotations, as a student who deletes them writes its signatures."""
    import ast

    hashes = all_kgrams(canonical(stub))
    try:
        tree = ast.parse(stub)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return hashes
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                      node.args.vararg, node.args.kwarg):
                if a is not None:
                    a.annotation = None
    return np.union1d(hashes, all_kgrams(canonical(ast.unparse(tree))))


@dataclass
class Match:
    """Two fingerprints compared: ``tokens`` filtered characters of ``a`` match; each
    file's ``shares`` of its fingerprinted code, weighed; the matched ``slices`` in each
    raw file; and how much of ``a``'s match the spec ``dictated`` (a share)."""

    tokens: int
    shares: tuple[float, float]
    slices: tuple[Any, Any]
    dictated: float


def compare(a: Fingerprint, b: Fingerprint) -> Match:
    """copydetect's ``compare_files`` with weighed shares: of each file's fingerprinted
    characters, the weight the other matches over the weight of them all, so what the
    spec dictates counts ``DICTATED_WEIGHT`` on both sides."""
    from copydetect.utils import find_fingerprint_overlap, get_copied_slices

    idx_a, idx_b = find_fingerprint_overlap(a.hashes, b.hashes, a.hash_idx, b.hash_idx)
    if len(idx_a) == 0:
        return Match(0, (0.0, 0.0), (np.array([]), np.array([])), 0.0)
    shares, slices, tokens, dictated = [], [], 0, 0.0
    for fp, idx in ((a, idx_a), (b, idx_b)):
        kept = fp.kept if fp.kept is not None else _covered(
            np.concatenate([np.array(i) for i in fp.hash_idx.values()]), len(fp.filtered_code))
        found = get_copied_slices(idx, K)
        matched = np.zeros(len(fp.filtered_code), dtype=bool)
        for start, end in zip(found[0], found[1]):
            matched[int(start):int(end)] = True
        weights = fp.weights if fp.weights is not None else np.ones(len(fp.filtered_code))
        total = float(weights[kept].sum())
        shares.append(float(weights[matched].sum()) / total if total else 0.0)
        if fp is a:
            tokens = int(matched.sum())
            dictated = float((matched & (weights < 1)).sum()) / tokens if tokens else 0.0
        if len(fp.offsets):
            found = found + fp.offsets[:, 1][np.clip(np.searchsorted(fp.offsets[:, 0], found),
                                                     0, fp.offsets.shape[0] - 1)]
        slices.append(found)
    return Match(tokens, (shares[0], shares[1]), (slices[0], slices[1]), dictated)


def _covered(idx: Any, length: int) -> np.ndarray:
    """The characters the k-grams starting at ``idx`` cover."""
    out = np.zeros(length, dtype=bool)
    starts = np.asarray(idx, dtype=np.int64)
    for offset in range(K):
        out[np.clip(starts + offset, 0, max(length - 1, 0))[starts + offset < length]] = True
    return out


# ------------------------------------------------------------------ code similarity

def _decode(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def canonical(code: str) -> str:
    """``code`` as compared: parsed and written back by ``ast`` without its docstrings,
    so comments, docstrings, layout, parentheses and number spellings do not count.
    Code that does not parse is compared as it is."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    try:
        return ast.unparse(tree) + "\n"
    except (ValueError, RecursionError, MemoryError):
        return code


def code_pairs(drill: str, sources: dict[str, str], stub: str | None,
               threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """Pairs of students whose file of ``drill`` is unusually similar (module docstring).

    ``sources``: student -> that file's code (students whose file is the stub, or who
    have none, are left out by the caller); ``stub``: the drill's stub, docstrings
    included (what they dictate counts ``DICTATED_WEIGHT``). Returns the drill's figures, its top pairs
    (``top``, flagged first, with both files and their matched regions) and every
    flagged pair with the best others (``listed``, for similarity.csv)."""
    spec = dictated_by(stub)
    stub_hashes = stub_kgrams(stub) if stub else np.zeros(0, dtype=np.int64)
    prints = {sid: fingerprint(code, stub_hashes, spec) for sid, code in sorted(sources.items())}
    counts = Counter(h for fp in prints.values() for h in fp.hashes)
    common = np.array(sorted(h for h, c in counts.items()
                             if len(prints) >= COMMON_MIN and c > COMMON_SHARE * len(prints)), dtype=np.int64)
    if len(common):
        prints = {sid: fingerprint(code, np.union1d(stub_hashes, common), spec) for sid, code in sorted(sources.items())}
    owners: dict[int, list[str]] = {}
    for sid, fp in prints.items():
        for h in fp.hashes:
            owners.setdefault(h, []).append(sid)
    candidates = {pair for sids in owners.values() for pair in itertools.combinations(sorted(sids), 2)}
    rows: list[dict[str, Any]] = []
    for a, b in sorted(candidates):
        found = compare(prints[a], prints[b])
        (share_a, share_b), (slices_a, slices_b) = found.shares, found.slices
        score = float(min(share_a, share_b))
        rows.append({"a": a, "b": b, "score": round(score, 4), "a_share": round(float(share_a), 4),
                     "b_share": round(float(share_b), 4), "matched": found.tokens,
                     "dictated": round(found.dictated, 4),
                     "flagged": bool(score >= threshold and found.tokens >= MIN_MATCH),
                     "a_spans": _spans(slices_a), "b_spans": _spans(slices_b)})
    rows.sort(key=lambda r: (-r["score"], -r["matched"], r["a"], r["b"]))
    pairs_total = len(prints) * (len(prints) - 1) // 2
    scores = sorted([r["score"] for r in rows] + [0.0] * (pairs_total - len(rows)))
    flagged = [r for r in rows if r["flagged"]]
    others = [r for r in rows if not r["flagged"] and r["score"] > 0]
    listed = [{k: v for k, v in r.items() if not k.endswith("_spans")}
              for r in (flagged + others[:TOP_PAIRS])[:MAX_LISTED]]
    shown = (flagged + others)[:TOP_PAIRS]
    for r in shown:
        r["a_code"] = sources[r["a"]][:MAX_CODE_CHARS]
        r["b_code"] = sources[r["b"]][:MAX_CODE_CHARS]
    return {"drill": drill, "students": len(prints), "pairs": pairs_total,
            "median": round(scores[len(scores) // 2], 4) if scores else None,
            "common_fingerprints": len(common), "flagged": len(flagged), "top": shown, "listed": listed}


def _spans(slices: Any) -> list[list[int]]:
    """copydetect's 2xN slice array as [[start, end], ...] in the raw code."""
    arr = np.asarray(slices)
    if arr.ndim != 2 or arr.shape[1] == 0:
        return []
    return [[int(s), int(e)] for s, e in zip(arr[0], arr[1])]


# ------------------------------------------------------------------ behaviour

def _wrong_answer(test: Mapping[str, Any]) -> str | None:
    """A lost property's minimal failing input and wrong output (what the code returned,
    or the first line of what it raised), as one key; None for anything else."""
    if test.get("outcome") not in (FAILED, ERROR):
        return None
    cx = test.get("counterexample") or {}
    from grader.reports.class_report import input_text

    given = input_text(cx)
    if given is None:
        return None
    got = cx.get("got")
    if got is not None:  # the same wrong value: its description decides, its words are shown
        same, said = json.dumps(got, sort_keys=True)[:2000], answer_text(got)[:300]
    else:  # what it raised
        said = (test.get("message") or "").strip().splitlines()[0][:300] if test.get("message") else ""
        same = said
    return json.dumps([test["name"], given, same, said, got is not None])


def behaviour(results_by_student: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per drill: pairs of students who share rare wrong answers, and the wrong answers
    many share (the class's common misconceptions)."""
    by_drill: dict[str, dict[str, list[str]]] = {}  # drill -> wrong answer -> students
    attempted: Counter[str] = Counter()
    for sid in sorted(results_by_student):
        for ex in results_by_student[sid].get("exercises", []):
            if ex.get("status") not in ("not_attempted", "not_run"):
                attempted[ex["id"]] += 1
            for t in ex.get("tests", []):
                key = _wrong_answer(t)
                if key is not None:
                    by_drill.setdefault(ex["id"], {}).setdefault(key, []).append(sid)
    out: dict[str, dict[str, Any]] = {}
    for drill, answers in sorted(by_drill.items()):
        limit = rare_limit(attempted[drill])
        shared: dict[tuple[str, str], list[dict[str, Any]]] = {}
        common = []
        for key, sids in sorted(answers.items()):
            test, given, _, said, returned = json.loads(key)
            answer = {"test": test, "input": given, "got": said, "returned": returned, "students": sids}
            if len(sids) > limit:
                common.append(answer)
            elif len(sids) >= 2:
                for a, b in itertools.combinations(sids, 2):
                    shared.setdefault((a, b), []).append(answer)
        pairs: list[dict[str, Any]] = [{"a": a, "b": b, "shared": len(items), "answers": items[:5]}
                                       for (a, b), items in shared.items()]
        pairs.sort(key=lambda p: (-p["shared"], p["a"], p["b"]))
        common.sort(key=lambda c: (-len(c["students"]), c["test"], c["input"]))
        out[drill] = {"pairs": pairs[:max(TOP_PAIRS, sum(1 for p in pairs if p["shared"] >= 2))],
                      "pairs_total": len(pairs), "rare_limit": limit, "common": common[:5],
                      "attempted": attempted[drill]}
    return out


# ------------------------------------------------------------------ bounds

def within_bounds(sizes: Mapping[str, int], file_bytes: int | None = None,
                  submission_bytes: int | None = None) -> dict[str, str]:
    """Of one submission's files (path -> bytes), those similarity leaves out, each with the
    bound it is over (``file`` or ``submission``): a file over ``file_bytes``
    (``COMPARED_FILE_BYTES``); then, while the others together are over
    ``submission_bytes`` (``COMPARED_SUBMISSION_BYTES``), the largest of them (of two
    the same size, the later path), so that as many as can be are compared. A file
    exactly at a bound is read."""
    file_bytes = COMPARED_FILE_BYTES if file_bytes is None else file_bytes
    submission_bytes = COMPARED_SUBMISSION_BYTES if submission_bytes is None else submission_bytes
    left_out = {path: "file" for path, size in sizes.items() if size > file_bytes}
    kept = sorted((size, path) for path, size in sizes.items() if path not in left_out)
    total = sum(size for size, _ in kept)
    while kept and total > submission_bytes:
        size, path = kept.pop()
        left_out[path] = "submission"
        total -= size
    return left_out


def _size(data: bytes | str) -> int:
    """Bytes of a file as compared: as graded (text as UTF-8) when that is within the
    bound; else of its code alone (``canonical``), so that comments or docstrings padded
    onto a copy do not take it out of the comparison."""
    raw = _raw_size(data)
    if raw <= COMPARED_FILE_BYTES:
        return raw
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return min(raw, len(canonical(text).encode("utf-8", errors="surrogatepass")))


def _raw_size(data: bytes | str) -> int:
    """Bytes of a file as graded (text as UTF-8)."""
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8", errors="surrogatepass"))


def _is_stub(data: bytes | str, stub: str | None) -> bool:
    if stub is None:
        return False
    return data == stub if isinstance(data, str) else data == stub.encode("utf-8")


def bounded_files(sources: Mapping[str, Mapping[str, bytes | str]], students: Iterable[str],
                  drills: Iterable[str], stubs: Mapping[str, str]
                  ) -> tuple[dict[str, dict[str, bytes | str]], list[dict[str, Any]]]:
    """Student -> drill -> the file similarity compares (files equal to the drill's stub
    left out: they are no one's work), and what it left out for its size (``within_bounds``):
    one dict per file, with ``student``, ``file``, ``bytes``, ``bound`` (``file`` or
    ``submission``) and ``limit`` (that bound in bytes), by student and file."""
    kept: dict[str, dict[str, bytes | str]] = {}
    skipped: list[dict[str, Any]] = []
    limits = {"file": COMPARED_FILE_BYTES, "submission": COMPARED_SUBMISSION_BYTES}
    ids = list(drills)
    for sid in sorted(students):
        files = {drill: data for drill in ids
                 if (data := (sources.get(sid) or {}).get(f"{drill}.py")) is not None
                 and not _is_stub(data, stubs.get(drill))}
        sizes = {drill: _size(data) for drill, data in files.items()}
        left_out = within_bounds(sizes)
        for drill in sorted(left_out):
            skipped.append({"student": sid, "file": f"{drill}.py", "bytes": _raw_size(files[drill]),
                            "bound": left_out[drill], "limit": limits[left_out[drill]]})
        kept[sid] = {drill: data for drill, data in files.items() if drill not in left_out}
    return kept, skipped


# ------------------------------------------------------------------ the class

def analyse(results_by_student: Mapping[str, Mapping[str, Any]], sources: Mapping[str, Mapping[str, bytes | str]],
            stubs: dict[str, str], threshold: float = DEFAULT_THRESHOLD,
            drills: Iterable[str] | None = None) -> dict[str, Any]:
    """The similarity evidence of a class: per drill, code pairs (from ``sources``:
    student -> path -> bytes, as graded) and behaviour pairs (from the results).
    ``stubs``: drill -> the stub's code; a student whose file equals it is left out.
    Files over the bounds are left out too, and listed in ``skipped`` (``bounded_files``)."""
    started = time.perf_counter()
    ids = sorted(set(drills) if drills is not None else
                 {ex["id"] for r in results_by_student.values() for ex in r.get("exercises", [])})
    kept, skipped = bounded_files(sources, results_by_student, ids, stubs)
    code = {}
    for drill in ids:
        files = {sid: canonical(_decode(kept[sid][drill])) for sid in sorted(kept) if drill in kept[sid]}
        if len(files) >= 2:
            code[drill] = code_pairs(drill, files, stubs.get(drill), threshold)
    return {"settings": {"k": K, "window": WINDOW, "threshold": threshold, "min_match": MIN_MATCH,
                         "common_share": COMMON_SHARE, "common_min": COMMON_MIN,
                         "dictated_weight": DICTATED_WEIGHT, "file_bytes": COMPARED_FILE_BYTES,
                         "submission_bytes": COMPARED_SUBMISSION_BYTES},
            "code": code, "behaviour": behaviour(results_by_student), "skipped": skipped,
            "seconds": round(time.perf_counter() - started, 3)}


def refresh(stored: dict[str, Any], results_by_student: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A stored analysis with its behaviour evidence made again from ``results_by_student``
    (``merge`` folds in new outcomes; the code did not change)."""
    return {**stored, "behaviour": behaviour(results_by_student)}
