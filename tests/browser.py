"""Headless Chromium (Debian's package) driven over the Chrome DevTools Protocol: load a page,
type, press keys, read the DOM, take screenshots, and collect every console error."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

from .conftest import patience

WIDTH, HEIGHT = 1280, 800
# Keys the tests press: (key, code, Windows virtual key code).
KEYS = {
    "Enter": ("Enter", "Enter", 13),
    "Tab": ("Tab", "Tab", 9),
    "ArrowDown": ("ArrowDown", "ArrowDown", 40),
    "ArrowUp": ("ArrowUp", "ArrowUp", 38),
    "Escape": ("Escape", "Escape", 27),
}


def chromium_path() -> str:
    """Debian's chromium (`make chromium` installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError(
            "chromium is not installed: run `make chromium` (apt-get install chromium)"
        )
    return found


class Browser:
    """One headless Chromium with one page, 1280x800."""

    def __init__(self) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="memvault-chromium-")
        self.process = subprocess.Popen(
            [
                chromium_path(),
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile.name}",
                f"--window-size={WIDTH},{HEIGHT}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its group: close() stops its helper processes too
        )
        port = self._debugging_port()
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=patience(30)
        )
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=HEIGHT,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _debugging_port(self) -> int:
        """The port Chromium chose, from the file it writes into its profile."""
        marker = Path(self.profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + patience(30)
        while not marker.exists() or not marker.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start")
            time.sleep(0.05)
        return int(marker.read_text().split()[0])

    def close(self) -> None:
        """Stop Chromium and every process it started, then remove its profile: a helper
        process still writing there made the removal fail ("Directory not empty")."""
        self.socket.close()
        self.process.terminate()
        self.process.wait(timeout=patience(10))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.profile.cleanup()

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One CDP command and its result; events that arrive meanwhile are kept."""
        call_id = next(self.ids)
        self.socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        """Keep an event; note console errors, uncaught exceptions and failed loads."""
        self.events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a)) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"] + " " + params["entry"].get("url", ""))

    def open(self, url: str) -> None:
        """Load a URL and wait until its page has loaded."""
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def run(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 30) -> Any:
        """Poll a JavaScript expression until it is truthy (as JavaScript sees it); its value."""
        deadline = time.monotonic() + patience(seconds)
        while True:
            value = self.run(
                f"(() => {{ const v = ({expression}); return v instanceof Node || v; }})()"
            )
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for: {expression}")
            time.sleep(0.05)

    def text(self, selector: str) -> str:
        """The visible text of the first element `selector` picks ('' when none)."""
        return str(self.run(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''"))

    def type(self, text: str) -> None:
        """Type into the focused element, as a keyboard would (input events fire)."""
        self.send("Input.insertText", text=text)

    def press(self, name: str, modifiers: int = 0) -> None:
        """Press and release one key (a name in KEYS, or a letter) on the focused element."""
        key, code, number = (
            KEYS[name] if name in KEYS else (name, f"Key{name.upper()}", ord(name.upper()))
        )
        common = {
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": number,
            "modifiers": modifiers,
        }
        text = {"text": "\r"} if name == "Enter" else {}
        self.send("Input.dispatchKeyEvent", type="keyDown", **common, **text)
        self.send("Input.dispatchKeyEvent", type="keyUp", **common)

    def click(self, selector: str) -> None:
        """Click the middle of an element, as a mouse would."""
        box = self.run(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def focused(self) -> str:
        """What has the keyboard focus: tag, id and text, for assertions."""
        return str(
            self.run(
                "(() => { const e = document.activeElement;"
                " return `${e.tagName}#${e.id} ${(e.innerText || e.value || '').slice(0, 80)}`;"
                " })()"
            )
        )

    def cookies(self) -> list[dict[str, Any]]:
        """Every cookie the browser holds, for any site (what it would send where)."""
        return list(self.send("Storage.getCookies")["cookies"])

    def screenshot(self, path: Path) -> None:
        """The page as a 1280x800 PNG."""
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
