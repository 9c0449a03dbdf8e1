"""Headless Debian Chromium, driven through the DevTools protocol (a small client over the
``websockets`` package): open a page, wait until it has loaded, collect what its console and
its scripts reported, read what it rendered, take a screenshot.

Used by ``tests/test_docs.py`` (``make docs-check``); also runnable by hand to look at a page::

    .venv/bin/python tests/browser.py URL [SHOT.png] [--scroll-to CSS] [--full] [--width PX]
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-port=0", "--remote-allow-origins=*")
WIDTH, HEIGHT = 1400, 900


@dataclass
class PageReport:
    url: str
    title: str = ""
    #: Console messages at error level, uncaught exceptions, failed loads, in order.
    errors: list[str] = field(default_factory=list)
    text_length: int = 0
    headings: list[str] = field(default_factory=list)
    #: Elements past the window's right edge, not kept in by a scrolling box: what overflows
    #: sideways.
    overflow: int = 0
    width: int = 0
    screenshot: bytes = b""


class Browser:
    """One Chromium process and one DevTools connection to its first tab."""

    def __init__(self, ws: Any, process: subprocess.Popen[bytes]) -> None:
        self._ws = ws
        self._process = process
        self._ids = itertools.count(1)
        self._events: list[dict[str, Any]] = []

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        mid = next(self._ids)
        await self._ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            message = json.loads(await asyncio.wait_for(self._ws.recv(), 30))
            if message.get("id") == mid:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._events.append(message)

    async def _drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                self._events.append(json.loads(await asyncio.wait_for(self._ws.recv(), left)))
            except TimeoutError:
                return

    async def open(self, url: str, scroll_to: str | None = None,
                   full_height: bool = False, width: int = WIDTH) -> PageReport:
        """Load ``url`` at ``width`` x 900 (1400 unless told: a phone is 390), let it settle,
        and report what it did."""
        self._events.clear()
        await self.call("Emulation.setDeviceMetricsOverride", width=width, height=HEIGHT,
                        deviceScaleFactor=1, mobile=width < 600)
        await self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load in 30 s")
            await self._drain(0.1)
        await self._drain(0.5)  # scripts that run after load (search index, highlighting)
        report = PageReport(url)
        for e in self._events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                              "assert"):
                args = " ".join(str(a.get("value", a.get("description", "")))
                                for a in params.get("args", []))
                report.errors.append(f"console.{params['type']}: {args}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                text = details.get("exception", {}).get("description") or details.get("text")
                report.errors.append(f"uncaught: {text}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                report.errors.append(f"{entry.get('source')}: {entry.get('text')} "
                                     f"{entry.get('url', '')}".rstrip())
        # An element past the window's right edge overflows sideways unless an ancestor that
        # scrolls or clips (a table's scroll box) keeps it in.
        await self.evaluate(
            "window.clipped = el => { for (let p = el.parentElement; p; p = p.parentElement) {"
            " const o = getComputedStyle(p).overflowX;"
            " if (o !== 'visible' && p.getBoundingClientRect().right <= window.innerWidth + 1)"
            " return true; } return false; }; 0")
        facts = await self.evaluate(
            "JSON.stringify({title: document.title, text: document.body.innerText.length,"
            " headings: [...document.querySelectorAll('h1, h2')].map(h => h.innerText),"
            " width: document.documentElement.scrollWidth,"
            " overflow: [...document.querySelectorAll('body *')].filter(el => "
            "el.getBoundingClientRect().right > window.innerWidth + 1 && "
            "el.offsetParent !== null && !clipped(el)).length})")
        data = json.loads(facts)
        report.title, report.text_length = data["title"], data["text"]
        report.headings, report.width = data["headings"], data["width"]
        report.overflow = data["overflow"]
        if scroll_to:
            await self.evaluate(f"document.querySelector({json.dumps(scroll_to)})"
                                ".scrollIntoView()")
            await self._drain(0.3)
        shot_params: dict[str, Any] = {"format": "png"}
        if full_height:
            height = json.loads(await self.evaluate("document.documentElement.scrollHeight"))
            shot_params |= {"captureBeyondViewport": True,
                       "clip": {"x": 0, "y": 0, "width": width,
                                "height": min(int(height), 6000), "scale": 1}}
        shot = await self.call("Page.captureScreenshot", **shot_params)
        report.screenshot = base64.b64decode(shot["data"])
        return report

    async def evaluate(self, expression: str) -> str:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return json.dumps(result["result"].get("value")) if not isinstance(
            result["result"].get("value"), str) else str(result["result"]["value"])


@contextlib.asynccontextmanager
async def browser() -> AsyncIterator[Browser]:
    """A fresh headless Chromium with its own profile folder, stopped on exit."""
    profile = Path(tempfile.mkdtemp(prefix="fixturegen-chromium-"))
    process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                                f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{CHROMIUM} did not start (exit {process.poll()})")
            await asyncio.sleep(0.05)
        port = port_file.read_text().split()[0]
        targets: list[dict[str, Any]] = []
        while not any(t.get("type") == "page" for t in targets):
            if time.monotonic() > deadline:
                raise RuntimeError("Chromium has no page to drive")
            with contextlib.suppress(OSError, ValueError):
                targets = await asyncio.to_thread(_json, f"http://127.0.0.1:{port}/json/list")
            await asyncio.sleep(0.05)
        page = next(t for t in targets if t.get("type") == "page")
        async with websockets.connect(page["webSocketDebuggerUrl"], max_size=64 << 20) as ws:
            b = Browser(ws, process)
            for domain in ("Page", "Runtime", "Log"):
                await b.call(f"{domain}.enable")
            yield b
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _json(url: str) -> list[dict[str, Any]]:
    import urllib.request

    with urllib.request.urlopen(url, timeout=5) as response:
        data: list[dict[str, Any]] = json.loads(response.read())
        return data


async def _main(argv: list[str]) -> int:
    url, shot = argv[0], argv[1] if len(argv) > 1 and not argv[1].startswith("--") else None
    scroll = argv[argv.index("--scroll-to") + 1] if "--scroll-to" in argv else None
    async with browser() as b:
        width = int(argv[argv.index("--width") + 1]) if "--width" in argv else WIDTH
        report = await b.open(url, scroll_to=scroll, full_height="--full" in argv, width=width)
    if shot:
        Path(shot).write_bytes(report.screenshot)
    print(json.dumps({k: v for k, v in report.__dict__.items() if k != "screenshot"}, indent=1))
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(_main(sys.argv[1:])))
