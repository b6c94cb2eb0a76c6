"""The sandbox in every configuration: all layers, each layer forced off, a bare
process, and a grader that is not root. Whatever is missing, the report says so,
and the process boundary, the data checks and the timeouts still hold."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grader.core.results_json import Results
from grader.sandbox import confine
from grader.tests import warm
from grader.tests.grading import REPO, exercise, grade_properties, run_grade

# Reports, from inside the worker, what it can see and do; loses one_hot's points.
PROBE = '''
import json, os, socket, sys

REFERENCE = {reference!r}


def one_hot(labels, num_classes=-1):
    facts = {{"pytest": "pytest" in sys.modules, "hypothesis": "hypothesis" in sys.modules,
              "tests": any(m == "tests" or m.startswith("tests.") for m in sys.modules),
              "uid": os.geteuid(), "cpus": len(os.sched_getaffinity(0)),
              "dynamo": "torch._dynamo" in sys.modules}}
    try:
        open(REFERENCE).read(1)
        facts["reference"] = "readable"
    except OSError as exc:
        facts["reference"] = type(exc).__name__
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        facts["inet"] = "allowed"
    except OSError:
        facts["inet"] = "refused"
    raise RuntimeError("PROBE " + json.dumps(facts))
'''

# The data check: an object equal to everything, where shapes and strides belong.
LIAR = '''
class _Yes:
    def __eq__(self, other):
        return True

    def __len__(self):
        return 0


def broadcast_shape(*shapes):
    return _Yes()


def broadcast_strides(shape, stride, target):
    return _Yes()
'''

# Far too slow: must end "timed out", quickly. One function sleeps (two calls past the
# limit each cost a grading 0.5 s of waiting); the other two are not attempted.
SLOW = '''
import time


def mae(pred, target):
    time.sleep(30)


def pearson(x, y):
    raise NotImplementedError


def iou(pred, target):
    raise NotImplementedError
'''

DRILLS = ["tensors/contiguity", "tensors/one_hot", "tensors/broadcast", "losses/metrics"]


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("probe") / "student"
    (root / "tensors").mkdir(parents=True)
    (root / "losses").mkdir()
    shutil.copy(REPO / "reference" / "tensors" / "contiguity.py", root / "tensors")
    reference = REPO / "reference" / "tensors" / "one_hot.py"
    (root / "tensors" / "one_hot.py").write_text(PROBE.format(reference=str(reference)))
    (root / "tensors" / "broadcast.py").write_text(LIAR)
    (root / "losses" / "metrics.py").write_text(SLOW)
    return root


def grade(submission: Path, out: Path, *args: str, prefix: tuple[str, ...] = (),
          drills: list[str] = DRILLS) -> tuple[Results, float]:
    start = time.perf_counter()
    results = run_grade(submission, out, "--only", *drills, "--no-shrink", "--profile",
                        "torchdrill-quick", "--call-timeout", "0.5", *args, timeout=300, prefix=prefix)
    return results, time.perf_counter() - start


def probe(results: Results) -> dict:
    for test in exercise(results, "tensors/one_hot")["tests"]:
        found = re.search(r"PROBE (\{.*?\})", test["message"])
        if found:
            return json.loads(found.group(1))
    raise AssertionError("no test reported the probe's findings")


def assert_boundary_holds(results: Results, seconds: float) -> dict:
    """What must hold with any set of layers: returns the probe's findings."""
    assert exercise(results, "tensors/contiguity")["score"] == exercise(results, "tensors/contiguity")["max_score"]
    facts = probe(results)
    assert not facts["pytest"] and not facts["hypothesis"] and not facts["tests"], (
        f"the worker is not a clean interpreter: {facts}")
    assert exercise(results, "tensors/one_hot")["score"] == 0
    liar = exercise(results, "tensors/broadcast")
    assert liar["score"] == 0 and all(t["outcome"] in ("failed", "error") for t in liar["tests"])
    slow = exercise(results, "losses/metrics")
    assert slow["score"] == 0
    outcomes = {t["outcome"] for t in slow["tests"]} - {"not_run", "not_attempted"}
    assert outcomes == {"timed_out"}, outcomes
    assert seconds < 120, f"grading took {seconds:.0f} s: the timeouts did not bound it"
    return facts


def test_every_layer(submission, tmp_path):
    """As one of grade-all's grading processes runs it: its workers take the uid it is given.
    Four drills: the zygote starts cold (``grader.sandbox.zygote.warm_for``), so the
    worker has not imported torch._dynamo."""
    pool_uid = confine.POOL_BASE + 1
    results, seconds = grade(submission, tmp_path, "--isolation", "sandbox",
                             prefix=("env", f"{confine.UID_ENV}={pool_uid}"))
    isolation = results["environment"]["isolation"]
    available = confine.plan("sandbox").layers
    assert isolation["mode"] == "sandbox"
    assert {k: v for k, v in isolation["layers"].items()} == available
    facts = assert_boundary_holds(results, seconds)
    if available["landlock"] == "on" or available["bwrap"] == "on":
        assert facts["reference"] != "readable", facts
    if available["seccomp"] == "on":
        assert facts["inet"] == "refused", facts
    if available["uid"] == "on":
        assert facts["uid"] == pool_uid, facts
    assert facts["cpus"] == 1, "the worker did not move to its grader's CPU"
    assert facts["dynamo"] is False, "a grading of four drills started a warm zygote"
    assert isolation["zygote_warm"] is False, "no optimizer crossed, yet the zygote warmed up"


def test_a_worker_follows_its_graders_cpu_and_shrugs_off_what_it_cannot():
    code = textwrap.dedent("""
        import os
        from grader.sandbox.pinning import follow_cpu
        allowed = sorted(os.sched_getaffinity(0))
        cpu = allowed[-1]
        assert follow_cpu(cpu, None) == cpu and os.sched_getaffinity(0) == {cpu}
        assert follow_cpu(cpu, cpu) == cpu
        assert follow_cpu(str(cpu), None) is None  # not a CPU number: ignored
        assert follow_cpu(4096, None) is False  # outside this process's set: refused
        assert os.sched_getaffinity(0) == {cpu}
        assert follow_cpu(allowed[0], False) is False  # refused once: not tried again
        print("followed")
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.stdout.strip() == "followed", done.stderr[-2000:]


@pytest.mark.parametrize("layer", confine.LAYERS)
def test_each_layer_forced_off(submission, tmp_path, layer):
    results, seconds = grade(submission, tmp_path, "--isolation", "sandbox", "--sandbox-off", layer)
    isolation = results["environment"]["isolation"]
    assert isolation["layers"][layer].startswith("off: forced off"), isolation
    assert layer in isolation["missing"]
    facts = assert_boundary_holds(results, seconds)
    others = {k: v for k, v in isolation["layers"].items() if k != layer}
    if others.get("seccomp") == "on":
        assert facts["inet"] == "refused", facts
    if others.get("landlock") == "on" or others.get("bwrap") == "on":
        assert facts["reference"] != "readable", facts
    if others.get("uid") == "on":
        assert facts["uid"] == confine.NOBODY, facts  # no pool uid given: 65534


# Run in a process of its own: it fills that process's table of zygotes.
SHARING = """
import json, os, shutil, socket, sys, time
from pathlib import Path
from grader.sandbox import confine, sandboxes, zygote

def alive(pid):
    return Path(f"/proc/{pid}").exists()

def sockets(pid):
    return sum(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:") for fd in os.listdir(f"/proc/{pid}/fd"))

submission = Path(sys.argv[1])
plan = confine.plan("sandbox", ["bwrap"])  # no pid namespace: a worker's pid is this machine's
owner = zygote.Zygote(plan)
shared = owner.share()
assert set(shared) == {"address", "key", "tmp", "plan", "warm"}, shared
assert (os.stat(Path(shared["address"]).parent).st_mode & 0o777) == 0o700
assert owner.exchange({"op": "kill", "pids": []}) == {"killed": True}  # after share's answer

for hello in ({"op": "hello", "key": "0" * 32}, {"op": "fork"}, {"op": "hello"}, [1]):
    stranger = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stranger.settimeout(60)
    stranger.connect(shared["address"])
    stranger.sendall(json.dumps(hello).encode())
    assert stranger.recv(64) == b"", f"the zygote answered a stranger's {hello}"

impostor = zygote.Zygote(plan, shared={**shared, "key": "0" * 32})
try:
    impostor.exchange({"op": "kill", "pids": []})
    raise AssertionError("the zygote served a wrong key")
except zygote.SandboxError:
    impostor.close()

boxes = []
for _ in range(2):  # two grading processes' sandboxes, as xdist's workers attach them
    zygote._zygotes[zygote._key(plan)] = zygote.Zygote(plan, shared=shared)
    boxes.append(sandboxes.Sandbox(submission, "sandbox", ["bwrap"]))
    del zygote._zygotes[zygote._key(plan)]
first, second = (box.worker("tensors/one_hot", {}) for box in boxes)
assert all(box.zygote.attached for box in boxes) and first.pid != second.pid
assert sockets(first.pid) == 1, "a worker holds a socket of the zygote's besides its own"
assert boxes[1].zygote.exchange({"op": "kill", "pids": [first.pid]}) == {"killed": True}
assert alive(first.pid), "one grading process killed another's worker"
boxes[0].zygote.close()  # that grading process is gone: its workers go, the other's stay
for _ in range(100):
    if not alive(first.pid):
        break
    time.sleep(0.05)
assert not alive(first.pid) and alive(second.pid)

owner.proc.kill()  # the shared zygote is gone: the other process starts its own
owner.proc.wait()
box = boxes[1]
worker = box.new_worker("tensors/one_hot", {})
assert not box.zygote.attached and box.zygote.restarts == 1 and worker.pid != second.pid
box.close()
box.zygote.close()
assert Path(shared["tmp"]).exists(), "an attached zygote removed the folder it shares"
owner.close()
assert not Path(shared["tmp"]).exists() and not Path(shared["address"]).parent.exists()
print("shared")
"""


def test_a_shared_zygote_serves_only_its_sharers_each_apart(tmp_path):
    """pytest-xdist's workers share their controller's zygote (``Zygote.share``). A
    stranger who cannot show the key gets nothing; one sharer cannot kill another's
    workers; a sharer that goes takes its workers along, no one else's; a worker
    inherits none of the zygote's sockets; and a sharer whose zygote is gone starts
    its own."""
    (tmp_path / "tensors").mkdir()
    shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", tmp_path / "tensors")
    done = subprocess.run([sys.executable, "-c", SHARING, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=240)
    assert done.stdout.strip() == "shared", done.stderr[-3000:]


def test_xdist_workers_grade_with_their_controllers_zygote(submission, tmp_path):
    """``-n 2``: one zygote for both workers (each starting its own would pay torch's
    import twice), and the boundary holds as with a zygote of their own."""
    results, seconds = grade(submission, tmp_path, "--isolation", "sandbox", "-n", "2")
    assert results["environment"]["isolation"]["zygote_shared"] is True
    assert_boundary_holds(results, seconds)


def test_the_first_optimizer_to_cross_warms_the_zygote(tmp_path, monkeypatch):
    """One drill: the zygote starts cold. The GAN's first call hands its worker two
    optimizers, so the zygote imports torch._dynamo before forking that worker
    (``grader.sandbox.zygote``); a grading where none crosses stays cold
    (``test_every_layer``)."""
    monkeypatch.setenv(warm.NO_SHARED_ZYGOTE_ENV, "1")  # a zygote of its own: the tests' shared one is warm
    results = grade_properties(REPO / "reference", tmp_path, {"training/gan": ["test_returns_python_floats"]},
                               "--isolation", "sandbox", "--no-shrink")
    assert [t["outcome"] for t in exercise(results, "training/gan")["tests"]] == ["passed"]
    assert results["environment"]["isolation"]["zygote_warm"] is True


def test_a_bare_process(submission, tmp_path):
    """--isolation process: no confinement, yet a clean interpreter, checked data, timeouts.
    Five drills (the fifth not handed in): a warm zygote, which imported torch._dynamo
    for its workers."""
    results, seconds = grade(submission, tmp_path, "--isolation", "process",
                             drills=[*DRILLS, "nn/conv_shapes"])
    isolation = results["environment"]["isolation"]
    assert isolation["mode"] == "process" and set(isolation["missing"]) == set(confine.LAYERS)
    assert exercise(results, "nn/conv_shapes")["status"] == "not_attempted"
    facts = assert_boundary_holds(results, seconds)
    assert facts["dynamo"] is True, "a grading of five drills started a cold zygote"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux's unshare")
def test_a_grader_that_is_not_root(submission, tmp_path):
    """In a user namespace the grader has no capabilities and is not uid 0: no uid drop,
    and the report says why, while every other layer still runs."""
    results, seconds = grade(submission, tmp_path, "--isolation", "sandbox",
                             prefix=("unshare", "--user"))
    isolation = results["environment"]["isolation"]
    assert isolation["layers"]["uid"].startswith("off: unavailable"), isolation
    assert_boundary_holds(results, seconds)


@pytest.fixture(scope="module")
def second_checkout(tmp_path_factory) -> Path:
    """The course and its grader copied elsewhere, as a worktree or a benchmark's copy
    would be, while the grader installed in this environment stays the first one."""
    root = tmp_path_factory.mktemp("checkout") / "course"
    root.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "tests")
    shutil.copytree(REPO / "grader", root / "grader", ignore=ignore)
    for folder in ("tests", "reference", "report_templates"):
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "course.toml", root)
    return root


def grade_in(checkout: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", "grade", "reference", "--only", "tensors/one_hot",
         "--isolation", "sandbox", "--out", str(out), "--profile", "torchdrill-quick", *args],
        capture_output=True, text=True, timeout=300, cwd=checkout)


def test_the_zygote_runs_the_graders_own_checkout(second_checkout, tmp_path):
    """Before: the zygote imported whichever grader its `python -I` found (here, the
    installed one, which bubblewrap hides), and every test of the reference failed."""
    done = grade_in(second_checkout, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    one_hot = exercise(results, "tensors/one_hot")
    assert one_hot["score"] == one_hot["max_score"], [t["message"] for t in one_hot["tests"]]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_zygote_that_cannot_start_stops_the_grading_not_scores_zero(second_checkout, tmp_path,
                                                                     workers):
    """The grader's failure is never a student's zero: no results, the zygote's own
    words in the message, and no restart per test (each test would wait again for a start that fails).
    With xdist the controller stops the run, without pytest's INTERNALERROR."""
    broken = tmp_path / "course"
    shutil.copytree(second_checkout, broken)
    loop = broken / "grader" / "sandbox" / "zygote_loop.py"
    head, sep, rest = loop.read_text().partition("from __future__ import annotations\n")
    # before its imports: each try to start it ends at once, not after torch's import
    loop.write_text(head + sep + "raise SystemExit('this zygote will not start')\n" + rest)
    start = time.perf_counter()
    done = grade_in(broken, tmp_path / "out", "-n", workers)
    seconds = time.perf_counter() - start
    assert done.returncode == 3, (done.returncode, done.stderr[-3000:])
    assert "the sandbox stopped working" in done.stderr, done.stderr[-3000:]
    assert "this zygote will not start" in done.stderr, done.stderr[-3000:]
    assert "INTERNALERROR" not in done.stderr, done.stderr[-3000:]
    assert not (tmp_path / "out" / "results.json").exists()
    assert seconds < 60, f"{seconds:.0f} s: the grader kept retrying a zygote that cannot start"


def test_a_sandbox_that_cannot_be_set_up_stops_the_grading(tmp_path):
    """The other way a sandbox fails the grader: setting up a submission's sandbox
    raises (here, as if its copy could not be made). Same rule: exit 3, the cause
    in the message, no results."""
    code = textwrap.dedent(f"""
        import sys
        from grader.sandbox import sandboxes

        def cannot(self, *args, **kwargs):
            raise OSError("no space left for the submission's copy (test)")

        sandboxes.Sandbox.__init__ = cannot
        from grader.cli import main
        sys.exit(main(["grade", "reference", "--only", "tensors/one_hot", "--isolation",
                       "sandbox", "--out", {str(tmp_path / "out")!r}, "--course", {str(REPO)!r}]))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 3, (done.returncode, done.stderr[-3000:])
    assert "the sandbox could not start" in done.stderr, done.stderr[-3000:]
    assert "no space left for the submission's copy (test)" in done.stderr, done.stderr[-3000:]
    assert not (tmp_path / "out" / "results.json").exists()


# Correct, but each call takes just under the call limit: no call ever times out.
SLOW_BUT_IN_TIME = '''
import time

def is_contiguous(size, stride):
    time.sleep(0.6)
    expected = 1
    for n, s in reversed(list(zip(size, stride))):
        if n != 1 and s != expected:
            return 0 in size
        expected *= max(n, 1)
    return True

def contiguous_strides(size):
    time.sleep(0.6)
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))
'''


def test_a_submission_slow_under_the_call_limit_stops_at_its_drills_budget(tmp_path):
    """Every call answers within --call-timeout, so no call times out; the drill's budget
    ends its grading instead, and the budgets used are in results.json. A budget charges
    the time a submission sleeps as it charges the time it runs (only waiting for a CPU
    is left out: ``grader.sandbox.clock``), so a sleeper gets no more than its budget.
    It got four times as much when budgets charged CPU time alone, and all it asked for
    where no limit per test was set (``--test-timeout 0``)."""
    (tmp_path / "slow" / "tensors").mkdir(parents=True)
    (tmp_path / "slow" / "tensors" / "contiguity.py").write_text(SLOW_BUT_IN_TIME)
    budget = 8.0
    results = run_grade(tmp_path / "slow", tmp_path / "out", "--only", "tensors/contiguity", "--call-timeout", "1",
                        "--drill-budget", f"{budget:g}", "--test-timeout", "0", "--no-shrink", timeout=120)
    tests = exercise(results, "tensors/contiguity")["tests"]
    assert {t["outcome"] for t in tests} == {"timed_out"}, [(t["name"], t["outcome"]) for t in tests]
    assert any("budget" in t["message"] for t in tests)
    seconds = sum(t["duration_s"] for t in tests)
    assert seconds <= 1.25 * budget, f"the drill's tests ran {seconds:.1f} s on a budget of {budget:g} s"
    assert results["environment"]["budgets"]["drills"] == {"tensors/contiguity": budget}


def test_a_rank_run_that_hangs_counts_as_one_timeout(tmp_path):
    """Every rank of a sandboxed rank run is a worker of its own; when they hang, they
    time out together, and the function's timeout count goes up by one, not by the
    number of ranks (after two, it is not called again)."""
    import torch

    from grader.contract.forbid import Forbidden
    from grader.core.outcomes import TimedOut
    from grader.sandbox.sandboxed_impl import SandboxedImplementation
    from grader.sandbox.sandboxes import Sandbox

    (tmp_path / "hangs" / "distributed").mkdir(parents=True)
    (tmp_path / "hangs" / "distributed" / "sync_bn.py").write_text(
        "def sync_batch_stats(x, all_reduce=None):\n    while True:\n        pass\n")
    sandbox = Sandbox(tmp_path / "hangs", "sandbox", call_timeout=1.0)
    impl = SandboxedImplementation(tmp_path / "hangs", "distributed/sync_bn", Forbidden({}), sandbox)
    key = ("distributed/sync_bn", "sync_batch_stats")
    try:
        for expected in (1, 2):
            with pytest.raises(TimedOut, match="ran past"):
                impl.run_ranks("sync_batch_stats", [(torch.ones(2, 3),)] * 3)
            assert sandbox.timeouts[key] == expected
        with pytest.raises(TimedOut, match="was not called"):
            impl.run_ranks("sync_batch_stats", [(torch.ones(2, 3),)] * 3)
    finally:
        sandbox.close()


def test_a_rank_that_hangs_frees_the_ranks_waiting_for_it_in_a_collective(tmp_path):
    """A rank's collective is served in the thread that waits for its worker, where it
    blocks until the other ranks arrive. One rank hangs: its request times out, and the
    ranks already waiting in all_reduce learn it at once (not after the collective's
    own 60 s rendezvous): one timeout for the run, within a few call limits."""
    import torch

    from grader.contract.forbid import Forbidden
    from grader.core.outcomes import TimedOut
    from grader.sandbox.sandboxed_impl import SandboxedImplementation
    from grader.sandbox.sandboxes import Sandbox

    (tmp_path / "one" / "distributed").mkdir(parents=True)
    (tmp_path / "one" / "distributed" / "sync_bn.py").write_text(
        "def sync_batch_stats(x, all_reduce=None):\n"
        "    while x.sum() > 0:\n"
        "        pass\n"
        "    all_reduce(x)\n"
        "    return x\n")
    sandbox = Sandbox(tmp_path / "one", "sandbox", call_timeout=1.0)
    impl = SandboxedImplementation(tmp_path / "one", "distributed/sync_bn", Forbidden({}), sandbox)
    try:
        start = time.perf_counter()
        with pytest.raises(TimedOut, match="ran past"):
            impl.run_ranks("sync_batch_stats", [(torch.zeros(2),), (torch.ones(2),), (torch.zeros(2),)])
        assert time.perf_counter() - start < 10
        assert sandbox.timeouts[("distributed/sync_bn", "sync_batch_stats")] == 1
        run = impl.run_ranks("sync_batch_stats", [(torch.zeros(2),)] * 3)  # fresh workers serve the next run
        assert [r.tolist() for r in run.results] == [[0.0, 0.0]] * 3 and run.calls == [1, 1, 1]
    finally:
        sandbox.close()


def test_a_sandbox_whose_workers_cannot_reach_the_gpu_stops_the_grading(tmp_path):
    """The first request that carries a CUDA tensor has a new worker try the GPU before it
    runs any submission code (so its answer can be believed). On an H100 runner Landlock
    refused the driver's ioctls and every sandboxed cuda test failed, the reference's too:
    a broken sandbox must stop the grading with the cause, never score each test zero.
    This machine has no GPU, so the probe's own answer is the failure to see."""
    import torch

    from grader.sandbox.sandboxes import Sandbox
    from grader.sandbox.zygote import SandboxBroken

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the probe would find it")
    (tmp_path / "one" / "tensors").mkdir(parents=True)
    (tmp_path / "one" / "tensors" / "one_hot.py").write_text("raise SystemExit('never imported')\n")
    sandbox = Sandbox(tmp_path / "one", "sandbox", call_timeout=5.0)
    try:
        with pytest.raises(SandboxBroken, match=r"cannot use the GPU .*is_available\(\) is False"):
            sandbox.check_gpu("tensors/one_hot", {})
        assert not sandbox.gpu_checked and sandbox.workers == {}  # the probe is gone
        with pytest.raises(SandboxBroken, match="cannot use the GPU"):  # and every later request
            sandbox.worker("tensors/one_hot", {})
    finally:
        sandbox.close()


def test_a_call_limit_of_zero_is_no_limit(tmp_path):
    """``--call-timeout 0`` ("0: none") set the worker's socket non-blocking: every call of
    every student failed with BlockingIOError and the class scored 0."""
    import torch

    from grader.contract.forbid import Forbidden
    from grader.sandbox.sandboxed_impl import SandboxedImplementation
    from grader.sandbox.sandboxes import Sandbox

    (tmp_path / "slow" / "tensors").mkdir(parents=True)
    (tmp_path / "slow" / "tensors" / "one_hot.py").write_text(
        "import time, torch\n\ndef one_hot(labels, num_classes=-1):\n    time.sleep(0.5)\n"
        "    return torch.nn.functional.one_hot(labels, num_classes)\n")
    sandbox = Sandbox(tmp_path / "slow", "sandbox", call_timeout=0)
    impl = SandboxedImplementation(tmp_path / "slow", "tensors/one_hot", Forbidden({}), sandbox)
    try:
        assert impl.one_hot(torch.tensor([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    finally:
        sandbox.close()
