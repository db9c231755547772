"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``):
no web socket and no extra package, just JSON messages separated by NUL bytes on file
descriptors 3 (to the browser) and 4 (from it).

``--dump-dom`` cannot wait for a web worker (the site's search runs in one), nor ask the page
a question, nor change the viewport; this can::

    with Chromium(executable) as browser:
        page = browser.page(width=390, height=844)
        page.goto("http://127.0.0.1:8000/?q=RECOV-14")
        page.wait_for("document.querySelectorAll('.md-search-result__item').length > 0")
        page.screenshot(path)
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


class ChromiumError(RuntimeError):
    pass


class Chromium:
    """One headless browser; :meth:`page` opens a tab. Use as a context manager."""

    def __init__(self, executable: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory(prefix="klogspec-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # the child's fds 3 and 4 must be these pipe ends whatever numbers they have here
        child_in, child_out = os.dup(to_browser_r), os.dup(from_browser_w)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def wire() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self._proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            preexec_fn=wire,  # noqa: PLW1509 - the fds must be set up in the child
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_in)
        os.close(child_out)
        self._out = to_browser_w
        self._in = from_browser_r
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """One protocol command; its result (events are skipped)."""
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not _readable(self._in, left):
                    raise ChromiumError(f"{method}: no answer within {self.timeout_s} s")
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise ChromiumError(f"{method}: chromium closed the pipe")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise ChromiumError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def page(self, width: int = 1280, height: int = 1000, mobile: bool = False) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        page.viewport(width, height, mobile)
        return page

    def close(self) -> None:
        try:
            if self._proc.poll() is None:
                self.send("Browser.close")
                self._proc.wait(timeout=10)
        except (ChromiumError, OSError, subprocess.TimeoutExpired):
            self._proc.kill()
            self._proc.wait()
        finally:
            for fd in (self._out, self._in):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._profile.cleanup()


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def _send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, self.session)

    def viewport(self, width: int, height: int, mobile: bool = False) -> None:
        self._send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )

    def goto(self, url: str, timeout_s: float = 30.0) -> None:
        """Load ``url`` afresh (never a same-document jump to a fragment) and wait until the
        document is complete; the page's scripts may have changed its fragment since."""
        self._send("Page.bringToFront")
        self._send("Page.navigate", {"url": "about:blank"})
        self.wait_for("location.href === 'about:blank'", timeout_s)
        self._send("Page.navigate", {"url": url})
        self.wait_for(
            "location.href !== 'about:blank' && document.readyState === 'complete'", timeout_s
        )

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (promises awaited), as JSON data."""
        result = self._send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise ChromiumError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0):
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise ChromiumError(f"timed out after {timeout_s} s waiting for {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        self._send("Page.bringToFront")  # a tab in the background draws no frames
        params: dict = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self._send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def element_screenshot(self, selector: str, path: Path, margin: int = 8) -> Path:
        """A screenshot of the first element ``selector`` finds (scrolled into view)."""
        self._send("Page.bringToFront")  # a tab in the background draws no frames
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
        )
        if not box:
            raise ChromiumError(f"no element {selector}")
        x, y, w, h = box
        clip = {
            "x": max(0, x - margin),
            "y": max(0, y - margin),
            "width": w + 2 * margin,
            "height": h + 2 * margin,
            "scale": 1,
        }
        data = self._send(
            "Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True}
        )["data"]
        path.write_bytes(base64.b64decode(data))
        return path


def _readable(fd: int, timeout_s: float) -> bool:
    """Whether ``fd`` has bytes within ``timeout_s``: poll, not select, whose descriptors
    must stay below 1024 (a long test run may hold more)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    return bool(poller.poll(timeout_s * 1000))
