"""stdio: every line a client sends gets an answer, even one the server cannot read, and the
server keeps serving the next lines (a real server process fed raw lines)."""

from __future__ import annotations

import json
import selectors
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from .conftest import patience
from .mcp_helpers import MEMVAULT, server_env

pytestmark = pytest.mark.processes

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
SEARCH_SURROGATE = (
    '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",'
    ' "params": {"name": "search_mem", "arguments": {"query": "\\ud800"}}}'
)


class RawClient:
    """A `memvault serve` process written to and read from line by line."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin: IO[bytes] = process.stdin
        self.stdout: IO[bytes] = process.stdout
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)

    def send(self, line: str) -> None:
        self.stdin.write(line.encode("utf-8") + b"\n")
        self.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next line the server writes, as JSON (fails after 30 s of silence)."""
        assert self.selector.select(timeout=patience(30)), "the server did not answer"
        return dict(json.loads(self.stdout.readline()))


@pytest.fixture
def client(vault_dir: Path) -> Iterator[RawClient]:
    process = subprocess.Popen(
        [*MEMVAULT, "--vault", str(vault_dir), "serve", "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(),
    )
    raw = RawClient(process)
    raw.send(json.dumps(INITIALIZE))
    assert raw.answer()["id"] == 0
    raw.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    try:
        yield raw
    finally:
        raw.stdin.close()
        process.wait(timeout=patience(10))
        raw.stdout.close()


@pytest.mark.parametrize(
    ("line", "code", "ident"),
    [
        (SEARCH_SURROGATE, -32700, None),
        ("garbage", -32700, None),
        ('[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]', -32600, None),
        ('{"id": 4}', -32600, 4),
        # A request whose id no JSON-RPC request may have (MCP: a string or an integer) is one
        # the SDK took for a notification and never answered.
        *(
            (json.dumps({"jsonrpc": "2.0", "id": bad, "method": "ping"}), -32600, None)
            for bad in ({"a": 1}, [1], True, False, 1.5, 1.0, None)
        ),
        (json.dumps({"jsonrpc": "2.0", "id": [], "method": "tools/list"}), -32600, None),
    ],
)
def test_an_unreadable_line_gets_a_json_rpc_error_and_the_next_request_is_served(
    client: RawClient, line: str, code: int, ident: int | None
) -> None:
    client.send(line)
    error = client.answer()
    assert (error["id"], error["error"]["code"]) == (ident, code)
    assert error["error"]["message"]
    client.send('{"jsonrpc": "2.0", "id": 9, "method": "ping"}')
    assert client.answer() == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_a_notification_gets_no_answer(client: RawClient) -> None:
    """JSON-RPC answers no message without an id, even one naming a request's method."""
    client.send('{"jsonrpc": "2.0", "method": "ping"}')
    client.send('{"jsonrpc": "2.0", "id": 9, "method": "ping"}')
    assert client.answer() == {"jsonrpc": "2.0", "id": 9, "result": {}}
