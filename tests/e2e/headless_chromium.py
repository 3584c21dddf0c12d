"""A headless Chromium driven through the DevTools protocol over a pipe, with the standard library only.

``--remote-debugging-pipe`` makes the browser read protocol messages from file descriptor 3 and write its
answers and events to descriptor 4, each message a JSON document followed by a NUL byte: no port, no
WebSocket. The browser is the one the e2e sample's Playwright uses (``sample_projects.chromium_path``:
``$CHROMIUM_PATH``, else Debian's /usr/bin/chromium, installed by scripts/dev/setup).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sample_projects import chromium_path

READ_FD, WRITE_FD = 3, 4  # the browser's ends of the two pipes
DEFAULT_TIMEOUT = 30.0


class BrowserError(RuntimeError):
    pass


class HeadlessChromium:
    """One browser, one page (a tab attached in flat mode); every event it sends is kept in ``events``."""

    def __init__(self, executable: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._profile = tempfile.mkdtemp(prefix="fixloop-chromium-")
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def wire_pipes() -> None:  # in the child, before exec: its descriptors 3 and 4
            os.dup2(to_browser_read, READ_FD)
            os.dup2(from_browser_write, WRITE_FD)
            os.set_inheritable(READ_FD, True)
            os.set_inheritable(WRITE_FD, True)

        argv = [
            str(executable),
            "--headless",
            "--remote-debugging-pipe",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            f"--user-data-dir={self._profile}",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.insert(1, "--no-sandbox")  # Chromium refuses to start its sandbox as root
        self._process = subprocess.Popen(
            argv,
            preexec_fn=wire_pipes,  # the test is single-threaded until the reader thread starts below
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._reader = threading.Thread(target=self._read_messages, daemon=True)
        self._reader.start()
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.page(f"{domain}.enable")

    # ---- the protocol ------------------------------------------------------------------------------

    def _read_messages(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._answers.put(None)
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    self._answers.put(message)
                else:
                    self.events.append(message)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                answer = self._answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise BrowserError(f"{method}: no answer within {self.timeout}s") from None
            if answer is None:
                raise BrowserError(f"{method}: the browser closed the pipe")
            if answer["id"] == self._next_id:
                break
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def page(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return self.call(method, params, self._session)

    # ---- what the tests use ------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        already = len(self.events)
        self.page("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while not any(event.get("method") == "Page.loadEventFired" for event in self.events[already:]):
            if time.monotonic() > deadline:
                raise BrowserError(f"{url} did not load within {self.timeout}s")
            time.sleep(0.02)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log errors (a blocked resource,
        a Content-Security-Policy violation), as text."""
        found: list[str] = []
        for event in self.events:
            method, params = event.get("method"), event.get("params") or {}
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(
                    "console: " + " ".join(str(arg.get("value")) for arg in params.get("args") or [])
                )
            elif method == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params.get("exceptionDetails"))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                found.append("log: " + str(params["entry"].get("text")))
        return found

    def requested_urls(self) -> list[str]:
        return [
            str(event["params"]["request"]["url"])
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)


def browser_missing() -> str | None:
    """Why no headless browser can run here (None when it can)."""
    path = chromium_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        return f"Chromium at {path} (Debian package `chromium`; run scripts/dev/setup or set CHROMIUM_PATH)"
    return None


@contextlib.contextmanager
def headless_chromium(timeout: float = DEFAULT_TIMEOUT) -> Iterator[HeadlessChromium]:
    browser = HeadlessChromium(chromium_path(), timeout)
    try:
        yield browser
    finally:
        browser.close()
