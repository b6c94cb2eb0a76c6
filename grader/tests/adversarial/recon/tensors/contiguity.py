"""Attack: reconnaissance. Reports what the worker can see and do, by raising it
(so it shows in results.json): uid/gid, capabilities, NoNewPrivs, seccomp mode,
environment variable names, sys.path, cwd, rlimits, open file descriptors,
network interfaces, and whether the course folder, its reference/ and tests/
and the submission folder (paths templated in at test time) are listable.
The test checks each against the layers the grader says are on."""

import json
import os
import resource
import sys

REPO = "@@REPO@@"
SUBMISSION = "@@SUBMISSION@@"


def _status():
    out = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("Uid", "Gid", "CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"):
                    out[key] = value.split()[0] if key in ("Uid", "Gid") else value.strip()
    except OSError as exc:
        out["error"] = type(exc).__name__
    return out


def _listable(path):
    try:
        return f"LISTED({len(os.listdir(path))})"
    except OSError as exc:
        return f"refused({type(exc).__name__})"


def _fds():
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return out


def _report():
    try:
        with open("/proc/self/net/dev") as f:
            interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
    except OSError as exc:
        interfaces = [f"error:{type(exc).__name__}"]
    facts = {
        "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups(),
        "status": _status(), "env": sorted(os.environ), "sys_path": sys.path[:12], "cwd": os.getcwd(),
        "flags_isolated": sys.flags.isolated,
        "rlimits": {name: resource.getrlimit(getattr(resource, name))[0]
                    for name in ("RLIMIT_CPU", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
                                 "RLIMIT_CORE")},
        "fds": _fds(), "interfaces": interfaces,
        "repo": _listable(REPO), "reference": _listable(os.path.join(REPO, "reference")),
        "tests": _listable(os.path.join(REPO, "tests")), "submission": _listable(SUBMISSION),
        "root": _listable("/"), "pid": os.getpid(),
    }
    return "ATTACK recon: FACTS=" + json.dumps(facts, sort_keys=True, separators=(",", ":"))


def is_contiguous(size, stride):
    raise RuntimeError(_report())


def contiguous_strides(size):
    raise RuntimeError(_report())
