"""The adversarial corpus: hostile submissions graded under ``--isolation sandbox``.

Every folder in ``adversarial/`` is one attack, laid out like ``exercises/`` (see
its README for what each tries and what stops it). Attacks are graded in pairs
(one on ``tensors/one_hot``, one on ``tensors/contiguity`` or ``losses/metrics``)
beside a correct copy of the third drill, taken from the course's ``reference/``
at test time, so one grading checks two attacks and a control. For each attack:

1. the attacked exercise scores 0, every test of it ending in an outcome that says
   why (error, failed or timed out; never passed);
2. the control scores full marks (so do the pair's other attack's own checks:
   an attack that kills its worker costs only its own exercise);
3. the grader survives: exit code 0, results.json parses;
4. only the grader writes results and reports: the final results.json and
   index.html are the grader's, the submission, the course's reference/ and
   tests/ are unchanged, --out holds only the grader's files and no canary file
   an attack dropped is found outside the sandbox.

``test_fails_for_the_right_reason`` then reads what each attack reported about
itself (it raises or prints its findings, which come back in results.json) and
checks it was stopped for the right reason: the reference was not readable, the
fork was refused, the socket did not connect, and so on.

Attack files may use placeholders the test fills in when it copies them:
``@@REPO@@`` (the course), ``@@OUT@@``, ``@@SUBMISSION@@``, ``@@OTHER@@`` (a
correct submission of another student beside this one) and ``@@CANARY@@`` (a
unique name for files an attack tries to leave behind): a student who knows the
grader's paths gets no further. ``X.py.shadow`` files are copied as ``X.py``
(a real ``conftest.py`` in this repository would be loaded by pytest itself), and
a file ``X.symlink`` becomes a symbolic link ``X`` to the path it holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import pytest

from grader.sandbox import confine
from grader.tests.grading import REPO, exercise, grade_process, grade_properties
from grader.tests.shared import shared

ADVERSARIAL = Path(__file__).parent / "adversarial"
CONTROLS = ("losses/metrics", "tensors/contiguity")
LAYERS = ("bwrap", "uid", "landlock", "seccomp", "rlimits")
PLACEHOLDERS = ("@@REPO@@", "@@OUT@@", "@@SUBMISSION@@", "@@OTHER@@", "@@CANARY@@")
FAKE_REPORT, FAKE_PASS = "TDADV-FAKE-REPORT", "TDADV-FAKE-PASS"
FAKE_MARKS = (FAKE_REPORT, FAKE_PASS)
GRADER_FILES = {"results.json", "index.html"}
# "not_run": the drill's cuda test on a runner without CUDA (excluded from the maximum)
LOSES = frozenset({"failed", "error", "not_run"})
FAILED = frozenset({"failed", "not_run"})
TIMED_OUT = frozenset({"timed_out", "not_run"})
NOT_THERE = frozenset({"not_attempted", "not_run"})
CALL_TIMEOUT = 1.0
BUDGET_S = 10.0  # the drill budget of the "budgets" grading

# grading name -> (attacks graded together, extra grader options)
GRADINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "equality": (("always_equal", "gc_hunt"), ()),
    "lying-tensors": (("tensor_subclass", "patch_compare"), ()),
    "patching": (("patch_pytest", "recon"), ()),
    "reference": (("import_reference", "read_reference_disk"), ()),
    "frames": (("frame_inspection", "nan_values"), ()),
    "exit-at-import": (("os_exit_import", "sys_exit_import"), ()),
    "exit-in-call": (("os_exit_call", "sys_exit_call"), ()),
    "resources": (("memory_hog", "fork_bomb"), ()),
    "escape": (("network", "write_reports"), ()),
    # a test timeout bounds the cost of a regression where every call is a 320 MiB answer
    "huge": (("huge_tensor", "huge_view"), ("--test-timeout", "10")),
    "batch": (("other_student", "fake_output"), ()),
    "shadows": (("shadowing", "reduce_payload"), ()),
    "hangs": (("slow_correct", "catch_base_loop"), ("--call-timeout", str(CALL_TIMEOUT))),
    "channel": (("channel_forge", "kill_zygote"), ()),
    "links": (("symlink_reference", "symlink_folder"), ()),
    # the guard's blind spots: another thread, a profile hook switched off, no torch-function modes
    "guard-routes": (("disable_torch_function", "setprofile_off", "helper_thread"), ()),
    # trusted observation: the dispatcher, ranks that are processes, rank identity
    "ranks": (("aten_ops", "rank_shared_memory", "forge_rank"), ()),
    "forgeries": (("patch_guard", "module_forward"), ()),
    # torch's twins of a forbidden API (its decompositions and references), and its source run again
    "twins": (("twin_decomp", "twin_refs", "twin_nll", "twin_broadcast", "twin_pool", "source_reexec"), ()),
    # a forbidden capability's other spellings: torch.func's transforms, log_softmax, group_norm,
    # nested tensors, a torch class's private pure-Python copy of the forbidden operator, numpy
    "capabilities": (("twin_func", "twin_log_softmax", "twin_group_norm", "twin_nested",
                      "twin_sharded_scaler", "numpy_route"), ()),
    # write-back, clean-up of what a worker leaves, and a full scratch disk
    "leftovers": (("steer_labels", "deep_tree", "fill_scratch"), ()),
    # what a student built, run on the grader's side; native code of its own in the worker
    "native": (("module_bomb", "native_code"), ()),
    # the wire carries aliasing and content, not the worker's claims
    "aliasing": (("view_answer",), ()),  # a write through numpy: grader/tests/same_verdict/numpy_write
    # what the grader does with a student's objects runs under the drill's budget and is bounded
    "budgets": (("describe_bomb", "module_swarm"), ("--drill-budget", str(BUDGET_S))),
}

# attacks graded on one property of their drill, which must be lost (the drill's other
# properties are passed on purpose: the attack answers right, with an effect it hides)
PROPERTY_ATTACKS: dict[str, tuple[str, ...]] = {
    "effects_tamper": ("test_global_random_state_is_untouched",
                       "test_shuffled_folds_cut_the_seeded_permutation"),
}

# attacks whose exercise file is reached through a linked folder
LINKED_TARGETS = {"symlink_folder": "losses/metrics"}

# attack -> the outcomes its exercise's tests may end in (all of them lose the points)
OUTCOMES: dict[str, frozenset[str]] = {
    "always_equal": LOSES, "tensor_subclass": LOSES, "patch_compare": LOSES,
    "patch_pytest": FAILED, "nan_values": FAILED,
    "huge_tensor": LOSES, "huge_view": LOSES, "reduce_payload": LOSES, "fake_output": FAILED,
    "describe_bomb": LOSES | TIMED_OUT, "module_swarm": LOSES | TIMED_OUT,
    "channel_forge": LOSES,
    "slow_correct": TIMED_OUT, "catch_base_loop": TIMED_OUT,
    "symlink_reference": NOT_THERE, "symlink_folder": NOT_THERE,
    # a drill's other function is left as its stub: not attempted
    "setprofile_off": LOSES | NOT_THERE, "helper_thread": LOSES | NOT_THERE,
    "rank_shared_memory": LOSES | NOT_THERE, "forge_rank": LOSES | NOT_THERE,
    "module_forward": FAILED, "steer_labels": FAILED,
    "twin_broadcast": LOSES | NOT_THERE, "twin_pool": LOSES | NOT_THERE,
    **{a: LOSES | NOT_THERE for a in ("twin_func", "twin_log_softmax", "twin_group_norm", "twin_nested",
                                      "twin_sharded_scaler")},
}


# ------------------------------------------------------------------ the corpus

def attack_names() -> list[str]:
    return sorted(p.name for p in ADVERSARIAL.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


@cache
def exercise_ids() -> frozenset[str]:
    from grader.core.syllabus import exercise_tests
    return frozenset(exercise_tests(REPO))


def attack_target(name: str) -> str:
    """The exercise an attack's folder submits (its one file that is an exercise)."""
    if name in LINKED_TARGETS:
        return LINKED_TARGETS[name]
    root = ADVERSARIAL / name
    ids = [p.relative_to(root).as_posix().removesuffix(".symlink").removesuffix(".py")
           for p in [*root.rglob("*.py"), *root.rglob("*.py.symlink")]]
    targets = [i for i in ids if i in exercise_ids()]
    assert len(targets) == 1, f"adversarial/{name} must submit exactly one exercise, found {targets}"
    return targets[0]


def grading_of(name: str) -> str:
    return next(g for g, (attacks, _) in GRADINGS.items() if name in attacks)


def control_of(grading: str) -> str:
    targets = {attack_target(a) for a in GRADINGS[grading][0]}
    return next(c for c in CONTROLS if c not in targets)


# ------------------------------------------------------------------ grading once per pair

@dataclass
class Graded:
    name: str
    root: Path
    submission: Path
    out: Path
    canary: str
    results: dict[str, Any]
    stdout: str
    stderr: str
    seconds: float
    changed: list[str]  # files that changed where only the grader may write
    canaries: list[str]  # canary files found outside the sandbox (removed after the grading)


def _digest(folder: Path) -> dict[str, str]:
    """Content hashes of the files under ``folder``; bytecode caches by name only."""
    out: dict[str, str] = {}
    if not folder.exists():
        return out
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(folder).as_posix()
        if "__pycache__" in path.parts:
            out[rel] = "pycache"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


_BYTECODE = re.compile(r"^[A-Za-z_]\w*\.cpython-\d+(-pytest-[\w.]+)?\.pyc$")


def _changes(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> list[str]:
    changed = []
    for where in before:
        old, new = before[where], after[where]
        for rel in sorted(set(old) | set(new)):
            if old.get(rel) == new.get(rel):
                continue
            if rel not in old and new[rel] == "pycache" and _BYTECODE.match(Path(rel).name):
                continue  # the grader's own pytest compiling the tests
            change = "appeared" if rel not in old else "vanished" if rel not in new else "changed"
            changed.append(f"{where}/{rel} {change}")
    return changed


def _find_canaries(graded_root: Path, canary: str) -> list[str]:
    found: list[Path] = []
    for folder in (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path.home(), REPO):
        found += folder.glob(f"*{canary}*")
    for folder in (REPO / "reference", REPO / "tests", REPO / "grader", graded_root):
        found += folder.rglob(f"*{canary}*")
    for sandbox_tmp in Path(tempfile.gettempdir()).glob("torchdrill-sandbox-*"):
        found += sandbox_tmp.rglob(f"*{canary}*")  # a private tmp left behind after grading
    for path in found:
        path.unlink(missing_ok=True)
    return sorted({str(p) for p in found})


def _copy_attack(name: str, submission: Path, values: dict[str, str]) -> None:
    source = ADVERSARIAL / name
    for path in sorted(source.rglob("*")):
        if path.name.endswith(".symlink"):  # X.symlink holds the target of a link X
            target = path.read_text().strip()
            for key, value in values.items():
                target = target.replace(key, value)
            link = submission / path.relative_to(source).as_posix().removesuffix(".symlink")
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)
            continue
        if not path.is_file() or not path.name.endswith((".py", ".py.shadow")):
            continue
        rel = path.relative_to(source).as_posix().removesuffix(".shadow")
        text = path.read_text()
        for key, value in values.items():
            text = text.replace(key, value)
        copied = submission / rel
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_text(text)


def _grade(name: str, root: Path) -> dict[str, Any]:
    attacks, options = GRADINGS[name]
    submission, out, other = root / "submission", root / "out", root / "other_student"
    canary = f"tdadv-canary-{name}-{uuid.uuid4().hex[:8]}"
    values = dict(zip(PLACEHOLDERS, (str(REPO), str(out), str(submission), str(other), canary)))
    for attack in attacks:
        _copy_attack(attack, submission, values)
    control = control_of(name)
    (submission / control).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "reference" / f"{control}.py", submission / f"{control}.py")
    (other / "tensors").mkdir(parents=True, exist_ok=True)  # a classmate's correct one_hot
    shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", other / "tensors" / "one_hot.py")

    watched = {"submission": submission, "other_student": other,
               "reference": REPO / "reference", "tests": REPO / "tests"}
    before = {k: _digest(v) for k, v in watched.items()}
    only = [attack_target(a) for a in attacks] + [control]
    start = time.monotonic()
    proc = grade_process(submission, out, "--isolation", "sandbox", "--no-shrink", "--profile",
                         "torchdrill-quick", *options,
                         "--only", *only, timeout=300)
    seconds = time.monotonic() - start
    after = {k: _digest(v) for k, v in watched.items()}
    canaries = _find_canaries(root, canary)
    assert proc.returncode == 0, (
        f"the grader did not survive grading {name} ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
        f"{proc.stderr[-6000:]}")
    results = json.loads((out / "results.json").read_text())
    return {"name": name, "root": str(root), "submission": str(submission), "out": str(out),
            "canary": canary, "results": results, "stdout": proc.stdout, "stderr": proc.stderr,
            "seconds": seconds, "changed": _changes(before, after), "canaries": canaries}


def graded_for(attack: str, tmp_path_factory: pytest.TempPathFactory) -> Graded:
    """The grading of ``attack``'s pair, made once per test session (a grading that
    failed fails every test of the pair, without grading again)."""
    name = grading_of(attack)
    g = shared(tmp_path_factory, f"adversarial-{name}", lambda folder: _grade(name, folder))
    return Graded(**{**g, **{k: Path(g[k]) for k in ("root", "submission", "out")}})


# ------------------------------------------------------------------ reading results

def records_of(results: dict[str, Any], exercise_id: str) -> list[dict[str, Any]]:
    return exercise(results, exercise_id)["tests"]


def messages(results: dict[str, Any], exercise_id: str) -> str:
    return "\n".join(t.get("message") or "" for t in records_of(results, exercise_id))


def captured(results: dict[str, Any], exercise_id: str) -> str:
    return "\n".join((t.get("stdout") or "") + (t.get("stderr") or "") for t in records_of(results, exercise_id))


def report_of(results: dict[str, Any], exercise_id: str, attack: str) -> str:
    """The first ``ATTACK <name>: ...`` text the attack left in a message or its output."""
    text = messages(results, exercise_id) + "\n" + captured(results, exercise_id)
    match = re.search(rf"ATTACK {attack}: [^\n]*", text)
    assert match, (f"{attack} left no report in results.json; the messages were:\n"
                   f"{messages(results, exercise_id)[:3000]}")
    return match.group(0)


def layers_on(results: dict[str, Any]) -> set[str]:
    layers = results["environment"]["isolation"]["layers"]
    return {name for name, state in layers.items() if state == "on"}


def max_of(ex: dict[str, Any]) -> float | None:
    return ex.get("max_score", ex.get("max"))


# ------------------------------------------------------------------ the tests

def test_corpus_is_complete():
    names = attack_names()
    assert len(names) >= 18, f"only {len(names)} attacks"
    grouped = [a for attacks, _ in GRADINGS.values() for a in attacks]
    assert sorted([*grouped, *PROPERTY_ATTACKS]) == names, "every attack folder is graded exactly once"
    for attacks, _ in GRADINGS.values():
        targets = [attack_target(a) for a in attacks]
        assert len(set(targets)) == len(targets), f"{attacks} attack the same exercise"
        assert len({*targets} & set(CONTROLS)) < len(CONTROLS), f"{attacks} leave no control"
    readme = (ADVERSARIAL / "README.md").read_text()
    missing = [n for n in names if f"`{n}`" not in readme]
    assert not missing, f"README.md does not describe {missing}"


def _param(attack: str):
    return pytest.param(attack, id=attack)


@pytest.mark.parametrize("attack", [_param(a) for a in attack_names() if a not in PROPERTY_ATTACKS])
def test_attack_scores_zero(attack, tmp_path_factory):
    g = graded_for(attack, tmp_path_factory)
    target, control = attack_target(attack), control_of(g.name)
    results = g.results

    # 1. the attacked exercise scores 0, for a reason its outcomes say
    ex = exercise(results, target)
    outcomes = [t["outcome"] for t in ex["tests"]]
    assert ex["score"] == 0, f"{attack} scored {ex['score']} on {target}: {outcomes}"
    assert outcomes and "passed" not in outcomes, f"{attack}: tests passed on {target}: {outcomes}"
    allowed = OUTCOMES.get(attack, LOSES)
    assert set(outcomes) <= allowed, (
        f"{attack}: outcomes {sorted(set(outcomes))}, expected only {sorted(allowed)}; messages:\n"
        f"{messages(results, target)[:3000]}")

    # 2. the rest of the submission is graded normally
    ctl = exercise(results, control)
    assert ctl["score"] == ctl["points"] == max_of(ctl) and ctl["status"] == "passed", (
        f"the control {control} beside {attack} scored {ctl['score']}/{ctl['points']}: "
        f"{[(t['name'], t['outcome'], t['message'][:200]) for t in ctl['tests'] if t['outcome'] != 'passed']}")

    # 3. the grader survived (graded() asserted exit code 0) and says how it isolated
    isolation = results["environment"]["isolation"]
    assert isolation["mode"] == "sandbox" and set(isolation["layers"]) == set(LAYERS), isolation
    assert not [n for n, s in isolation["layers"].items() if s.startswith("failed")], isolation

    # 4. results and reports are the grader's alone
    assert not g.changed, f"files changed outside the sandbox: {g.changed}"
    assert not g.canaries, f"files the attacks dropped outside the sandbox: {g.canaries}"
    assert {p.name for p in g.out.iterdir()} <= GRADER_FILES, sorted(p.name for p in g.out.iterdir())
    # student output may show in the report, as captured output; nothing else may
    assert FAKE_REPORT not in (g.out / "index.html").read_text(errors="replace"), \
        "index.html holds text the submission wrote"
    on_disk = json.loads((g.out / "results.json").read_text())
    for ex_ in on_disk["exercises"]:
        for t in ex_["tests"]:
            t.pop("stdout", None), t.pop("stderr", None)
    assert not [m for m in FAKE_MARKS if m in json.dumps(on_disk)], \
        "results.json holds text the submission wrote (outside its captured output)"
    assert exercise(on_disk, target)["score"] == 0 and on_disk["submission"] == results["submission"]


# ------------------------------------------------------------------ the right reasons

def _nothing_read(report: str, verdict: str) -> None:
    assert verdict in report and "READ " not in report and "IMPORTED" not in report \
        and "FOUND" not in report and "MODULE " not in report, report


def check_import_reference(g: Graded, report: str) -> None:
    _nothing_read(report, "VERDICT=nothing-found")


def check_read_reference_disk(g: Graded, report: str) -> None:
    _nothing_read(report, "VERDICT=nothing-read")
    assert f"repo {os.path.join('reference', 'losses', 'metrics.py')}=" in report, report


def check_frame_inspection(g: Graded, report: str) -> None:
    _nothing_read(report, "VERDICT=nothing-found")
    frames = report.split("frames: ", 1)[1]
    assert str(REPO / "tests") not in frames and str(REPO / "reference") not in frames, frames
    assert "test_one_hot" not in frames and "hypothesis" not in frames and "_pytest" not in frames, frames


def check_gc_hunt(g: Graded, report: str) -> None:
    _nothing_read(report, "VERDICT=nothing-found")


def check_other_student(g: Graded, report: str) -> None:
    _nothing_read(report, "VERDICT=nothing-read")
    assert "absolute=" in report, report


def check_patch_pytest(g: Graded, report: str) -> None:
    assert "tests-import=refused" in report, report


def check_fork_bomb(g: Graded, report: str) -> None:
    assert "STARTED=0" in report, report


def check_memory_hog(g: Graded, report: str) -> None:
    assert "torch.empty=refused" in report and "bytearray=refused" in report, report


def check_network(g: Graded, report: str) -> None:
    assert "CONNECTED" not in report, report
    if "seccomp" in layers_on(g.results):
        assert "CREATED" not in report, report


def check_write_reports(g: Graded, report: str) -> None:
    assert "OPENED" not in report, report
    wrote = re.findall(r"(\S+)=WROTE", report)
    # /tmp, /var/tmp and /dev/shm may be the sandbox's own (private) folders; the
    # canary search on this side of the boundary checks nothing landed on the host
    assert set(wrote) <= {"canary-tmp", "canary-var-tmp", "canary-shm"}, report


def check_kill_zygote(g: Graded, report: str) -> None:
    assert "KILLED" not in report, report


def check_shadowing(g: Graded, report: str) -> None:
    assert "TORCH_REAL=True SHADOWS_IMPORTED=0" in report, report


def check_sys_exit_call(g: Graded, report: str | None) -> None:
    text = messages(g.results, "tensors/contiguity")
    assert "KeyboardInterrupt" in text and "SystemExit" in text, text[:2000]


def check_huge_tensor(g: Graded, report: str | None) -> None:
    text = messages(g.results, "tensors/one_hot")
    assert re.search(r"(?i)MiB|too (large|big)|limit", text), text[:2000]


def check_fake_output(g: Graded, report: str | None) -> None:
    for mark in FAKE_MARKS:
        assert mark not in g.stdout and mark not in g.stderr, "student output reached the grader's own output"
        assert mark not in messages(g.results, "tensors/contiguity")
    assert "\x1b" not in g.stdout, "the grader's own output holds the student's terminal escapes"
    raw = [c for c in ("\x1b", "\x07") if c in (g.out / "index.html").read_text()]
    assert not raw, f"index.html shows the student's control characters raw ({raw}): show them escaped"
    for t in records_of(g.results, "tensors/contiguity"):
        assert len(t["stdout"]) + len(t["stderr"]) < 256 * 1024, "captured output is not capped"


def check_slow_correct(g: Graded, report: str | None) -> None:
    assert g.seconds < 60, f"grading a 30 s-per-call submission took {g.seconds:.0f} s"
    spent = sum(t["duration_s"] for t in records_of(g.results, "tensors/one_hot"))
    assert spent < 4 * CALL_TIMEOUT + 10, f"one_hot's tests took {spent:.1f} s in all"


def check_catch_base_loop(g: Graded, report: str | None) -> None:
    spent = sum(t["duration_s"] for t in records_of(g.results, "tensors/contiguity"))
    assert spent < 2 * 2 * CALL_TIMEOUT + 15, f"contiguity's tests took {spent:.1f} s in all"


def check_recon(g: Graded, report: str) -> None:
    facts = json.JSONDecoder().raw_decode(report.split("FACTS=", 1)[1])[0]
    on = layers_on(g.results)
    assert facts["flags_isolated"] == 1
    assert not [k for k in facts["env"] if k.startswith(("PYTHON", "TORCHDRILL", "PYTEST", "VIRTUAL_ENV"))], facts["env"]
    assert not [fd for fd, target in facts["fds"].items() if target.startswith(str(REPO))], facts["fds"]
    if "uid" in on:
        assert facts["uid"] == facts["euid"] == 65534 and facts["groups"] == [], facts
        assert int(facts["status"]["CapEff"], 16) == 0, facts["status"]
    if "seccomp" in on:
        assert facts["status"]["NoNewPrivs"] == "1" and facts["status"]["Seccomp"] == "2", facts["status"]
    if "bwrap" in on:
        assert facts["interfaces"] == ["lo"], facts["interfaces"]
    if on & {"bwrap", "landlock"}:
        for where in ("repo", "reference", "tests", "submission"):
            assert not facts[where].startswith("LISTED"), f"{where}: {facts[where]}"
    if "rlimits" in on:
        limits = facts["rlimits"]
        assert 0 < limits["RLIMIT_DATA"] <= 4 * 2**30 and limits["RLIMIT_CORE"] == 0, limits
        assert 0 < limits["RLIMIT_FSIZE"] <= 2**30 and 0 < limits["RLIMIT_NOFILE"] <= 1024, limits


def _refused_as_forbidden(g: Graded, attack: str, api: str) -> None:
    """Every test that called the attacked drill's function ended on the forbidden use."""
    target = attack_target(attack)
    called = [t for t in records_of(g.results, target) if t["outcome"] in ("failed", "error")]
    assert called and all(api in (t["message"] or "") for t in called), (
        f"{attack}: tests not stopped by the guard on {api}: "
        f"{[(t['name'], t['message'][:200]) for t in called if api not in (t['message'] or '')]}")


def check_disable_torch_function(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "disable_torch_function", "torch.nn.functional.one_hot")


def check_aten_ops(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "aten_ops", "torch.nn.functional.one_hot")


def check_patch_guard(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "patch_guard", "torch.nn.functional.one_hot")


def check_setprofile_off(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "setprofile_off", "torch.broadcast_shapes")


def check_helper_thread(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "helper_thread", "DistributedSampler")


def check_twin_decomp(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_decomp", "torch.nn.functional.one_hot, which this drill forbids")


def check_twin_refs(g: Graded, report: str | None) -> None:  # torch.layer_norm or native_layer_norm
    _refused_as_forbidden(g, "twin_refs", "layer_norm, which this drill forbids")


def check_twin_nll(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_nll", "torch.nn.functional.nll_loss, which this drill forbids")


def check_twin_broadcast(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_broadcast", "torch.broadcast_shapes, which this drill forbids")


def check_twin_pool(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_pool", "max_pool2d_with_indices, which this drill forbids")


def check_twin_func(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_func", "called torch.func.grad, which this drill forbids. Instead: ")


def check_twin_log_softmax(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_log_softmax",
                          "called torch.nn.functional.log_softmax, which this drill forbids. Instead: ")


def check_twin_group_norm(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_group_norm",
                          "called torch.nn.functional.group_norm, which this drill forbids. Instead: ")


def check_twin_nested(g: Graded, report: str | None) -> None:
    _refused_as_forbidden(g, "twin_nested", "called torch.nested.nested_tensor, which this drill forbids. Instead: ")


def check_twin_sharded_scaler(g: Graded, report: str | None) -> None:
    """Importing FSDP's scaler, which holds a namesake of ``torch._amp_update_scale_``, is a use."""
    _refused_as_forbidden(g, "twin_sharded_scaler",
                          "called torch._amp_update_scale_, which this drill forbids. Instead: ")


def check_source_reexec(g: Graded, report: str) -> None:
    routes = dict(r.split("=", 1) for r in report.split(": ", 1)[1].split())
    assert len(routes) == 12 and all(v.startswith("refused") for v in routes.values()), report


def check_rank_shared_memory(g: Graded, report: str) -> None:
    assert "VERDICT=alone" in report, report


def check_forge_rank(g: Graded, report: str | None) -> None:
    text = messages(g.results, "distributed/ring_allreduce")
    assert "FORGED" not in text and "spoke for rank" in text, text[:2000]


def check_module_forward(g: Graded, report: str | None) -> None:
    text = messages(g.results, "nn/fuse_conv_bn")
    assert "weight" in text or "output" in text, text[:2000]


def check_steer_labels(g: Graded, report: str | None) -> None:
    text = messages(g.results, "tensors/one_hot")  # compared with the oracle on the test's labels
    assert "Tensor-likes are not equal" in text, text[:2000]


def _message_of(g: Graded, attack: str, test: str) -> str:
    record = next(t for t in records_of(g.results, attack_target(attack)) if t["name"] == test)
    return record.get("message") or ""


def check_channel_forge(g: Graded, report: str | None) -> None:
    """Every call writes a forged frame first: every test that called is the worker's
    error, never a failure or "the test could not check the result"."""
    called = [t for t in records_of(g.results, "tensors/one_hot") if t["outcome"] != "not_run"]
    assert called and all(t["outcome"] == "error" and "broke the grading contract" in (t["message"] or "")
                          for t in called), [(t["name"], t["outcome"], t["message"][:200]) for t in called]


def check_numpy_route(g: Graded, report: str | None) -> None:
    """Refused as numpy, whichever function the grading called first."""
    called = [t for t in records_of(g.results, "losses/accuracy") if t["outcome"] != "not_run"]
    assert called and all("called numpy." in (t["message"] or "") for t in called), \
        [(t["name"], t["message"][:200]) for t in called if "called numpy." not in (t["message"] or "")]


def check_view_answer(g: Graded, report: str | None) -> None:
    text = _message_of(g, "view_answer", "test_results_share_no_memory_with_the_arguments")
    assert "shares memory with an argument" in text, text[:2000]  # not only the wrong shape


def check_deep_tree(g: Graded, report: str) -> None:
    assert "DEPTH=3000 FILES=2000" in report, report  # built, then removed (no canary found)


def check_fill_scratch(g: Graded, report: str) -> None:
    on = layers_on(g.results)
    if "bwrap" in on:  # the scratch tmpfs (512 MiB), not the machine's disk, ran out
        assert "error=ENOSPC" in report and int(cast(re.Match[str], re.search(r"fill=(\d+)MiB", report))[1]) <= 512, report
    if on & {"bwrap", "landlock"}:
        assert "shm=refused" in report, report
    if "seccomp" in on:
        assert "kill-all=refused" in report, report


def check_module_bomb(g: Graded, report: str | None) -> None:
    called = [t for t in records_of(g.results, "nn/fuse_conv_bn") if t["outcome"] != "not_run"]
    refused = "broke the grading contract: a Conv2d came back with out_channels=4096"
    assert called and all(refused in (t["message"] or "") for t in called), [  # before it ran here
        (t["name"], (t["message"] or "")[:200]) for t in called if refused not in (t["message"] or "")]
    spent = sum(t["duration_s"] for t in records_of(g.results, "nn/fuse_conv_bn"))
    assert spent < 30, f"fuse_conv_bn's tests took {spent:.1f} s in all (the red team's bomb: 76 s)"


def check_describe_bomb(g: Graded, report: str | None) -> None:
    tests = records_of(g.results, "tensors/one_hot")
    charged = sum(t["charged_s"] for t in tests)
    assert charged <= 1.25 * BUDGET_S, f"one_hot's tests were charged {charged:.1f} s on a {BUDGET_S:g} s budget"


def check_module_swarm(g: Graded, report: str | None) -> None:
    called = [t for t in records_of(g.results, "nn/fuse_conv_bn") if t["outcome"] != "not_run"]
    refused = ("broke the grading contract: the answer holds over 64 modules",  # a smaller swarm's fate
               "broke the grading contract: the answer's header is")  # 60,000 modules: a 9 MB header
    assert called and all(any(r in (t["message"] or "") for r in refused) or t["outcome"] == "timed_out"
                          for t in called), [
        (t["name"], (t["message"] or "")[:200]) for t in called]
    charged = sum(t["charged_s"] for t in called)
    assert charged <= 1.25 * BUDGET_S, f"fuse_conv_bn's tests were charged {charged:.1f} s on a {BUDGET_S:g} s budget"


def check_native_code(g: Graded, report: str) -> None:
    assert "LOADED" not in report and "OPENED" not in report, report
    on = layers_on(g.results)
    if "bwrap" in on:  # the scratch is noexec: the loader cannot map a copied library as code
        assert "copy-dlopen=refused(OSError" in report and "failed to map segment" in report, report
        assert "copy-import=refused(ImportError" in report, report
    if "seccomp" in on and not confine.gpu_devices():
        assert "memfd=refused(PermissionError" in report, report
    if "seccomp" in on:  # ctypes' calls through a CDLL raise no audit event: seccomp refuses it
        assert "mq_open=refused(PermissionError: [Errno 1]" in report, report


def check_os_exit_call(g: Graded, report: str | None) -> None:
    assert len(records_of(g.results, "tensors/one_hot")) > 1  # every test was graded, none stopped the rest


RIGHT_REASONS = {name.removeprefix("check_"): fn for name, fn in dict(globals()).items()
                 if name.startswith("check_")}
REPORTED = {"import_reference", "read_reference_disk", "frame_inspection", "gc_hunt", "other_student",
            "patch_pytest", "fork_bomb", "memory_hog", "network", "write_reports", "kill_zygote",
            "shadowing", "recon", "rank_shared_memory", "deep_tree", "fill_scratch", "source_reexec", "native_code"}


@pytest.mark.parametrize("attack", [_param(a) for a in sorted(RIGHT_REASONS)])
def test_fails_for_the_right_reason(attack, tmp_path_factory):
    g = graded_for(attack, tmp_path_factory)
    report = report_of(g.results, attack_target(attack), attack) if attack in REPORTED else None
    RIGHT_REASONS[attack](g, report)


# ------------------------------------------------------------------ one property

def graded_property(attack: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Grade ``attack``'s drill, sandboxed, on its ``PROPERTY_ATTACKS`` only; results.json."""
    def make(folder: Path) -> dict[str, Any]:
        values = dict(zip(PLACEHOLDERS, (str(REPO), str(folder / "out"), str(folder / "submission"),
                                         str(folder / "other"), f"tdadv-canary-{attack}")))
        _copy_attack(attack, folder / "submission", values)
        return dict(grade_properties(folder / "submission", folder / "out",
                                     {attack_target(attack): list(PROPERTY_ATTACKS[attack])},
                                     "--no-shrink", "--isolation", "sandbox"))
    return shared(tmp_path_factory, f"adversarial-property-{attack}", make)


def test_effects_tamper_loses_the_random_state_property(tmp_path_factory):
    """A kfold that seeds the global generator and then tries every way to wipe the
    worker's record of it (grader imports, patched torch names, the heap, sys.modules,
    the stack, json.dumps and socket.sendmsg) still loses the property that forbids the
    effect, and only that one."""
    results = graded_property("effects_tamper", tmp_path_factory)
    tests = {t["name"].split("[")[0]: t for t in records_of(results, "training/kfold")}
    untouched = tests["test_global_random_state_is_untouched"]
    assert untouched["outcome"] == "failed" and "global random generator" in untouched["message"], untouched
    assert tests["test_shuffled_folds_cut_the_seeded_permutation"]["outcome"] == "passed"  # right folds
    report = report_of(results, "training/kfold", "effects_tamper")
    for refused in ("grader-import=refused(ModuleNotFoundError)", "worker-import=refused(ModuleNotFoundError)",
                    "gc=refused(PermissionError)", "grader-modules=0 main-names=0 holders=0"):
        assert refused in report, report
    assert re.search(r"frames=modules-patched=[1-9]\d* defaults-set=0 defaults-refused=[1-9]", report), report
    assert "json.dumps=patched socket.sendmsg=patched" in report, report  # and still lost


# ------------------------------------------------------------------ a class

CLASSMATE_ATTACKS = ("fill_scratch", "deep_tree", "other_student")


def test_classmates_stay_apart(tmp_path):
    """grade-all, two grading processes: an attacker who fills the scratch disk, leaves a
    deep tree, signals every process it may and reads classmates' files, beside two
    correct classmates. The classmates' scores are full, as in a clean grading, and
    their files are untouched; the attacker scores 0; grade-all finishes."""
    from grader.tests.test_classgrade import current, grade_all

    folder, out = tmp_path / "submissions", tmp_path / "out"
    drills = sorted(attack_target(a) for a in CLASSMATE_ATTACKS)
    victims = ("victim-a", "victim-b")
    for victim in victims:
        for drill in drills:
            (folder / victim / drill).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / "reference" / f"{drill}.py", folder / victim / f"{drill}.py")
    canary = f"tdadv-canary-class-{uuid.uuid4().hex[:8]}"
    values = dict(zip(PLACEHOLDERS, (str(REPO), str(out), str(folder / "attacker"),
                                     str(folder / victims[0]), canary)))
    for attack in CLASSMATE_ATTACKS:
        _copy_attack(attack, folder / "attacker", values)
    before = {v: _digest(folder / v) for v in victims}

    proc = grade_all(str(folder), "--out", str(out), "--workers", "2", "--only", *drills,
                     "--profile", "torchdrill-quick", "--no-similarity", timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    graded = current(out)
    for victim in victims:
        for drill in drills:
            ex = exercise(graded[victim], drill)
            assert ex["score"] == ex["max_score"] > 0, (victim, drill, [
                (t["name"], t["outcome"], t["message"][:200]) for t in ex["tests"] if t["outcome"] != "passed"])
        assert _digest(folder / victim) == before[victim], f"{victim}'s files changed"
    for drill in drills:
        assert exercise(graded["attacker"], drill)["score"] == 0, drill
    assert not _find_canaries(tmp_path, canary), "the attacker's files outlived its grading"
