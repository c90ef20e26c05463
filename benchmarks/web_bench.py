"""The web page at 10k memories, in headless Chromium (tests/browser.py's driver): how soon
the first page is interactive (its first results shown, measured by the page itself from the
navigation's start), and how long search as you type takes to show each answer (the request
and the rendering, from the page's own performance marks; the typing debounce is not in it)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from measure import MEMVAULT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.browser import Browser

TOKEN = "bench-token"
LOADS = 5
TYPED_QUERIES = 10
TYPED_CHARS = 15  # the first characters of each query: searches while a word is typed
KEY_PAUSE = 0.2  # seconds between keys: past the page's 120 ms debounce, so each prefix searches


def serve(base_args: list[str], errlog: object) -> tuple[subprocess.Popen[bytes], str]:
    """`memvault serve --transport http` on a free port, once it accepts connections."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [MEMVAULT, *base_args, "serve", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen([*command, "--token", TOKEN], stderr=errlog)  # type: ignore[arg-type]
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"http://127.0.0.1:{port}"
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the HTTP server did not start") from None
            time.sleep(0.05)


def measure(
    base_args: list[str], texts: list[str], errlog: object
) -> tuple[list[float], list[float]]:
    """(first-interactive times over LOADS loads, each typed search's time), in ms."""
    server, base = serve(base_args, errlog)
    browser = Browser()
    try:
        browser.open(f"{base}/?token={TOKEN}")
        interactive = []
        for _ in range(LOADS):
            browser.open(f"{base}/")
            interactive.append(
                float(
                    browser.wait_for(
                        "performance.getEntriesByName('memvault-interactive')[0]?.startTime", 30
                    )
                )
            )
        browser.run("performance.clearMeasures()")
        for text in texts[:TYPED_QUERIES]:
            browser.run("document.querySelector('#q').select()")
            for char in text[:TYPED_CHARS]:
                browser.type(char)
                time.sleep(KEY_PAUSE)
        time.sleep(1)
        searches = browser.run(
            "performance.getEntriesByName('memvault-search').map(e => e.duration)"
        )
        if browser.errors:
            raise RuntimeError(f"console errors: {browser.errors[:3]}")
        return interactive, [float(t) for t in searches]
    finally:
        browser.close()
        server.terminate()
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
