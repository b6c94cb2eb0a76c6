"""Attack: write a fake results.json and index.html where the grader writes its own,
and leave files behind.

Finds the out folder from the path templated in at test time, from its own
``sys.argv``, the environment, every ``/proc/<pid>/cmdline`` it can read
(``--out DIR``) and cwd; writes a results.json claiming full marks and an
index.html there, now and again from a background thread every 0.2 s for as
long as the worker lives (to land after the grader's own write). Also drops
canary files in /tmp, /var/tmp, /dev/shm, the course folder, its reference/ and
tests/ folders (and a .pyc next to the tests' bytecode), the submission folder
and home, and opens the tests' existing files for appending (writing nothing).
Raises with what each write did.
"""

import glob
import json
import os
import sys
import threading
import time

OUT = "@@OUT@@"
REPO = "@@REPO@@"
SUBMISSION = "@@SUBMISSION@@"
CANARY = "@@CANARY@@"
MARK = "-".join(["TDADV", "FAKE", "REPORT"])
notes = {}


def _out_dirs():
    dirs = [OUT, os.getcwd()]
    argvs = [sys.argv]
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(cmdline, "rb") as f:
                argvs.append([a.decode(errors="replace") for a in f.read().split(b"\0")])
        except OSError:
            continue
    for argv in argvs:
        for i, arg in enumerate(argv[:-1]):
            if arg == "--out":
                dirs.append(argv[i + 1])
    dirs += [v for k, v in os.environ.items() if "OUT" in k or "REPORT" in k]
    return [d for d in dict.fromkeys(dirs) if d]


def _fake_results():
    exercise = {"id": "tensors/contiguity", "title": MARK, "points": 10, "score": 10, "max_score": 10,
                "status": "passed", "tests": []}
    return json.dumps({"schema": 1, "submission": MARK, "score": 10, "max_score": 10,
                       "exercises": [exercise], "environment": {}})


def _write(path, text, key):
    try:
        with open(path, "w") as f:
            f.write(text)
        notes[key] = "WROTE"
    except BaseException as exc:  # noqa: BLE001
        notes.setdefault(key, f"refused({type(exc).__name__})")


def _reports():
    for i, folder in enumerate(_out_dirs()):
        if folder == os.getcwd():
            continue  # its own private tmp: allowed, and not where reports go
        _write(os.path.join(folder, "results.json"), _fake_results(), f"out{i}-results")
        _write(os.path.join(folder, "index.html"), f"<h1>{MARK} 100%</h1>", f"out{i}-index")


def _canaries():
    places = {"tmp": "/tmp", "var-tmp": "/var/tmp", "shm": "/dev/shm", "repo": REPO,
              "reference": os.path.join(REPO, "reference"), "tests": os.path.join(REPO, "tests"),
              "tests-pycache": os.path.join(REPO, "tests", "tensors", "__pycache__"),
              "submission": SUBMISSION, "home": os.path.expanduser("~"),
              "out": OUT}
    for key, folder in places.items():
        name = CANARY + (".pyc" if key == "tests-pycache" else ".txt")
        _write(os.path.join(folder, name), MARK, f"canary-{key}")
    for path in glob.glob(os.path.join(REPO, "tests", "tensors", "*.py"))[:3] + \
            glob.glob(os.path.join(REPO, "reference", "tensors", "*.py"))[:3]:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            os.close(fd)
            notes[f"append {os.path.basename(path)}"] = "OPENED"
        except BaseException as exc:  # noqa: BLE001
            notes.setdefault("append", f"refused({type(exc).__name__})")


def _again():
    while True:
        time.sleep(0.2)
        try:
            _reports()
        except BaseException:  # noqa: BLE001
            pass


def _attack():
    _reports()
    _canaries()
    threading.Thread(target=_again, daemon=True).start()
    summary = " ".join(f"{k}={v}" for k, v in notes.items())
    raise RuntimeError(f"ATTACK write_reports: {summary}"[:3000])


def is_contiguous(size, stride):
    _attack()


def contiguous_strides(size):
    _attack()
