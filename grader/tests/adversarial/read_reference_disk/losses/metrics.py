"""Attack: find reference/losses/metrics.py (or the tests) on disk and exec it.

Candidates: every folder above this file, the course path templated in at test
time, /work/main, /work, cwd and its parents, the folder above the installed
``grader`` package, paths named in site-packages' ``.pth`` / editable-install
files, and every /proc/<pid>/cwd and /proc/<pid>/root it can see. A bounded
walk from / looks for any ``reference/losses/metrics.py`` as well. If one can be
read, its functions are used (full marks); otherwise it raises with what
happened at each candidate.
"""

import glob
import os
import site
import sys

REPO = "@@REPO@@"
REL = os.path.join("reference", "losses", "metrics.py")
TESTS_REL = os.path.join("tests", "losses", "test_metrics.py")
seen = {}


def _candidates():
    roots = []
    here = os.path.dirname(os.path.abspath(__file__))
    while True:
        roots.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    roots += [REPO, "/work/main", "/work", os.getcwd(), os.path.expanduser("~")]
    cwd = os.getcwd()
    while os.path.dirname(cwd) != cwd:
        cwd = os.path.dirname(cwd)
        roots.append(cwd)
    try:
        import grader

        roots.append(os.path.dirname(os.path.dirname(os.path.abspath(grader.__file__))))
    except BaseException as exc:  # noqa: BLE001
        seen["import grader"] = type(exc).__name__
    for sp in site.getsitepackages() + sys.path:
        for pth in glob.glob(os.path.join(sp, "*.pth")) + glob.glob(os.path.join(sp, "__editable__*")):
            try:
                with open(pth, errors="replace") as f:
                    text = f.read(20000)
            except OSError:
                continue
            for token in text.replace("'", " ").replace('"', " ").split():
                if token.startswith("/"):
                    roots += [token, os.path.dirname(token)]
    for proc in glob.glob("/proc/[0-9]*"):
        for link in ("cwd", "root"):
            roots.append(os.path.join(proc, link))
            roots.append(os.path.join(proc, link) + REPO)
    return list(dict.fromkeys(r for r in roots if r))


def _walk_for_reference(limit=30000):
    count = 0
    for top, dirs, files in os.walk("/", onerror=lambda e: None):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr", "lib", "lib64")]
        count += 1
        if count > limit:
            return None
        if top.endswith(os.path.join("reference", "losses")) and "metrics.py" in files:
            return os.path.join(top, "metrics.py")
    return None


def _load():
    for root in _candidates():
        for rel in (REL, TESTS_REL):
            path = os.path.join(root, rel)
            try:
                with open(path) as f:
                    source = f.read()
            except OSError as exc:
                seen.setdefault(type(exc).__name__, 0)
                seen[type(exc).__name__] += 1
                if root == REPO:
                    seen[f"repo {rel}"] = type(exc).__name__
                continue
            seen[f"READ {path}"] = len(source)
            if rel == REL:
                namespace = {"__name__": "stolen"}
                exec(compile(source, path, "exec"), namespace)
                return namespace
    walked = _walk_for_reference()
    seen["walk"] = walked or "nothing"
    if walked:
        namespace = {"__name__": "stolen"}
        with open(walked) as f:
            exec(compile(f.read(), walked, "exec"), namespace)
        return namespace
    return None


def _stolen(name):
    def call(*args, **kwargs):
        namespace = _load()
        if namespace is None:
            summary = ", ".join(f"{k}={v}" for k, v in seen.items())
            raise RuntimeError(f"ATTACK read_reference_disk: VERDICT=nothing-read; {summary}"[:3000])
        return namespace[name](*args, **kwargs)
    return call


iou = _stolen("iou")
pearson = _stolen("pearson")
mae = _stolen("mae")
