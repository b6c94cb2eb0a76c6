"""Headless Chromium driven over the DevTools protocol, for the report's browser test.

No extra packages and no network: Chromium is started with
``--remote-debugging-pipe``, which speaks the DevTools protocol as NUL-terminated
JSON messages on file descriptors 3 (commands in) and 4 (replies and events out).
Nothing listens on a port and nothing is downloaded.

    with Chromium.launch() as browser:
        page = browser.open(Path("index.html").as_uri())
        page.evaluate("document.title")
        page.screenshot(Path("shot.png"))
        page.console_errors  # console errors, uncaught exceptions, error log entries
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--hide-scrollbars", "--disable-dev-shm-usage", "--remote-debugging-pipe")
TIMEOUT_S = 60.0


def find_chromium() -> str | None:
    """The Chromium executable, or None where this machine has none."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(Exception):
    """Chromium did not answer, or answered a command with an error."""


class Chromium:
    """One headless Chromium process and its DevTools pipe."""

    def __init__(self, proc: subprocess.Popen, to_browser: int, from_browser: int, profile: str):
        self.proc = proc
        self._out = to_browser
        self._in = from_browser
        self._profile = profile
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    @classmethod
    def launch(cls, executable: str | None = None) -> Chromium:
        executable = executable or find_chromium()
        if executable is None:
            raise BrowserError("no Chromium on this machine")
        profile = tempfile.mkdtemp(prefix="torchdrill-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write commands, Chromium reads them on fd 3
        evt_r, evt_w = os.pipe()  # Chromium writes on fd 4, we read

        def wire_fds() -> None:  # in the child, before exec: put the pipe ends on 3 and 4
            a, b = os.dup(cmd_r), os.dup(evt_w)  # first, in case either is already 3 or 4
            os.dup2(a, 3)  # dup2 makes them inheritable
            os.dup2(b, 4)

        proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            # fds 3 and 4 exist only after preexec_fn, so close_fds would close them;
            # every other fd of ours is non-inheritable and closes on exec anyway
            preexec_fn=wire_fds, close_fds=False)
        os.close(cmd_r)
        os.close(evt_w)
        return cls(proc, cmd_w, evt_r, profile)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", timeout=5)
                except (BrowserError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self._out, self._in):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.proc.stderr:
                self.proc.stderr.close()
            shutil.rmtree(self._profile, ignore_errors=True)

    # -------------------------------------------------------------- protocol

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """Send one command and wait for its reply (events met meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        reply = self._read_until(lambda m: m.get("id") == message["id"], timeout, method)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, session: str | None = None,
                   timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """Wait for (or find already received) the event ``method``."""
        for event in self.events:
            if event.get("method") == method and event.get("sessionId") == session:
                self.events.remove(event)
                return event
        event = self._read_until(lambda m: m.get("method") == method
                                 and m.get("sessionId") == session, timeout, method)
        self.events.remove(event)
        return event

    def _read_until(self, wanted: Callable[[dict[str, Any]], bool], timeout: float,
                    what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "method" in message:
                    self.events.append(message)
                if wanted(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer {what} within {timeout:g} s")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium closed the DevTools pipe ({what}): "
                                       + self._stderr_tail())
                self._buffer += chunk

    def _stderr_tail(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "still running"
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    # -------------------------------------------------------------- pages

    def open(self, url: str, width: int = 1200, height: int = 900) -> Page:
        """A new tab showing ``url``, loaded (its ``load`` event fired)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        reply = page.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise BrowserError(f"could not open {url}: {reply['errorText']}")
        self.wait_event("Page.loadEventFired", session)
        return page


class Page:
    """One tab, attached in flat mode (commands carry its session id)."""

    def __init__(self, browser: Chromium, session: str):
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression evaluated in the page."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"evaluating {expression!r}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    @property
    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        self.send("Runtime.evaluate", {"expression": "0"})  # flush pending events
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                    for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append("exception: " + str(details.get("exception", {}).get("description")
                                                 or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append("log: " + str(params["entry"].get("text")))
        return found

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """A PNG of the page (the whole page, not just the viewport, by default)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            width, height = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
