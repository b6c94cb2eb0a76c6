"""The warm process behind ``check`` (``grader.learner.warm``): it serves a later
``check`` with the same output as a cold one, ends when the engine's files change or
when it has been idle, and is off when asked."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.learner import warm
from grader.tests.grading import REPO

SERVED = ("import sys\nfrom grader.learner import warm\ncode = warm.served(sys.argv[1:])\n"
          "sys.exit(101 if code is None else code)\n")
NOT_SERVED = 101


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the course's folders a learner's check reads, one_hot done."""
    root = tmp_path / "course"
    for name in ("tests", "exercises", "locales"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("course.toml",):
        shutil.copy(REPO / name, root / name)
    shutil.copy(REPO / "reference" / "tensors" / "one_hot.py", root / "exercises" / "tensors" / "one_hot.py")
    return root


def _short(folder: Path) -> str:
    """A short name for ``folder`` (a link in /tmp): a socket's path has at most 107 bytes."""
    link = Path(tempfile.mkdtemp(prefix="tdw", dir="/tmp")) / "t"
    link.symlink_to(folder)
    return str(link)


def _untimed(text: str) -> str:
    return re.sub(r"\d+\.\d+ s\b", "T s", text)


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "TMPDIR": _short(tmp_path / "tmp"), warm.ENV: "1", "TORCHDRILL_LANG": "en",
            "PYTHONPATH": str(REPO), **more}


def _wait_for(path_of_socket: Path, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):  # up to a minute for its imports on a busy machine
        if path_of_socket.exists():
            return
        assert proc.poll() is None, "the warm server ended before it listened"
        time.sleep(0.1)
    raise AssertionError("the warm server never listened")


def _socket_in(env: dict[str, str]) -> Path:
    code = "from grader.learner import warm; print(warm.socket_path())"
    return Path(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                               check=True, cwd=REPO).stdout.strip())


def test_a_later_check_is_served_warm_with_a_cold_checks_output(course, tmp_path):
    (tmp_path / "tmp").mkdir()
    env = _env(tmp_path, **{warm.IDLE_ENV: "60"})
    server = subprocess.Popen([sys.executable, "-m", "grader.learner.warm"], env=env, cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(_socket_in(env), server)
        cold = subprocess.run([sys.executable, "-m", "grader", "check", "one_hot"], env={**env, warm.ENV: "0"},
                              cwd=course, capture_output=True, text=True, timeout=300)
        served = subprocess.run([sys.executable, "-c", SERVED, "check", "one_hot"], env=env, cwd=course,
                                capture_output=True, text=True, timeout=300)
        assert served.returncode == cold.returncode == 0, (served.stdout, served.stderr)
        assert _untimed(served.stdout) == _untimed(cold.stdout) and "tensors/one_hot is done" in served.stdout
        broken = course / "exercises" / "tensors" / "one_hot.py"
        broken.write_text(broken.read_text().replace("return", "return 0 *", 1))
        again = subprocess.run([sys.executable, "-c", SERVED, "check", "one_hot"], env=env, cwd=course,
                               capture_output=True, text=True, timeout=300)
        assert again.returncode not in (0, NOT_SERVED), again.stdout  # the file as it is now, not as it was
    finally:
        server.kill()
        server.wait()


def test_the_server_ends_when_idle_and_takes_its_socket_with_it(tmp_path):
    (tmp_path / "tmp").mkdir()
    env = _env(tmp_path, **{warm.IDLE_ENV: "1"})
    server = subprocess.Popen([sys.executable, "-m", "grader.learner.warm"], env=env, cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = _socket_in(env)
    try:
        _wait_for(path, server)
        assert server.wait(timeout=60) == 0
        assert not path.exists()
        gone = subprocess.run([sys.executable, "-c", SERVED, "check", "one_hot"], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=60)
        assert gone.returncode == NOT_SERVED
    finally:
        server.kill()
        server.wait()


def test_a_server_whose_engine_changed_serves_nothing_and_ends():
    """The engine's files are compared before every request: stale code is never run."""
    ours, theirs = socket.socketpair()
    with theirs:
        socket.send_fds(theirs, [json.dumps({"argv": ["check", "x"], "cwd": "/", "env": {}}).encode()],
                        [0, 1, 2])
        assert warm._serve_one(ours, stamp="what the engine was") is False
        assert json.loads(theirs.recv(4096)) == {"pid": None}


def test_the_engine_stamp_follows_its_files(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(warm, "_ENGINE", tmp_path)
    before = warm.engine_stamp()
    os.utime(tmp_path / "a.py", ns=(0, 10**9))
    assert warm.engine_stamp() != before


def test_warm_serving_is_off_when_asked(monkeypatch):
    monkeypatch.setenv(warm.ENV, "0")
    assert warm.served(["check", "one_hot"]) is None


def test_a_client_sends_nothing_to_a_socket_in_a_folder_others_may_enter(tmp_path, monkeypatch):
    """The red team's other user made the folder first (0777) and listened there: the
    client sent it its environment and terminal, and printed the result it faked."""
    base = Path(_short(tmp_path))
    monkeypatch.setattr(warm, "socket_path", lambda: base / "shared" / "x.sock")
    (base / "shared").mkdir(mode=0o777)
    os.chmod(base / "shared", 0o777)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(base / "shared" / "x.sock"))
    listener.listen(1)
    listener.setblocking(False)
    monkeypatch.setenv(warm.ENV, "1")
    try:
        assert warm.served(["check", "one_hot"]) is None
        with pytest.raises(BlockingIOError):
            listener.accept()  # it never connected
    finally:
        listener.close()
    assert not warm._ours(base / "shared")
    (base / "mine").mkdir(mode=0o700)
    (base / "link").symlink_to(base / "mine")
    assert warm._ours(base / "mine") and not warm._ours(base / "link")
