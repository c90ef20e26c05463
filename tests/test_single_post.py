"""/mcp over HTTP answers every kind of POST as the MCP SDK's stateless JSON transport does,
now that a POST of one request is answered in its own task (server/single_post.py): the
same answers, errors and refusals, checked on raw HTTP against a real server process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.mcp_helpers import http_server, http_session, structured

from .conftest import patience

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    vault = tmp_path_factory.mktemp("vault")
    (vault / "retries.md").write_text("# Payment retries\n\nRetry payments three times.\n")
    with http_server(vault, "--no-watch") as (address, _process):
        yield address


def post(url: str, body: Any, **headers: str) -> httpx2.Response:
    """One raw POST of `body` (JSON unless bytes) with the usual headers and `headers`."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx2.post(url, content=data, headers={**HEADERS, **headers}, timeout=patience(30))


def call(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


def test_a_tool_call_is_answered_in_json_with_its_own_id(url: str) -> None:
    for request_id in (7, "seven"):
        answer = post(
            url,
            call(
                request_id, "tools/call", {"name": "search_mem", "arguments": {"query": "payment"}}
            ),
        )
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        reply = answer.json()
        assert reply["id"] == request_id and reply["jsonrpc"] == "2.0"
        assert reply["result"]["isError"] is False
        assert reply["result"]["structuredContent"]["results"][0]["path"] == "retries.md"


def test_protocol_errors_keep_the_sdks_codes(url: str) -> None:
    unknown = post(url, call(1, "no/such/method")).json()
    assert unknown["id"] == 1 and unknown["error"]["code"] == -32601
    nameless = post(url, call(2, "tools/call", {"arguments": {}})).json()
    assert nameless["id"] == 2 and nameless["error"]["code"] == -32602
    ping = post(url, call(3, "ping"))
    assert ping.status_code == 200 and ping.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    listed = post(url, call(4, "tools/list"), **{"MCP-Protocol-Version": "2025-06-18"}).json()
    assert "search_mem" in {tool["name"] for tool in listed["result"]["tools"]}


def test_a_tool_error_is_a_result_that_says_so(url: str) -> None:
    reply = post(
        url, call(5, "tools/call", {"name": "read_mem", "arguments": {"identifier": "ghost"}})
    ).json()
    assert reply["result"]["isError"] is True
    assert "ghost" in reply["result"]["content"][0]["text"]


def test_messages_that_are_not_one_request_go_the_sdks_way(url: str) -> None:
    notification = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (notification.status_code, notification.content) == (202, b"")
    garbage = post(url, b"{not json")
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == -32700
    batch = post(url, [call(1, "ping"), call(2, "ping")])
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32602
    started = post(
        url,
        call(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
    ).json()
    assert started["result"]["protocolVersion"] == "2025-06-18"


def test_refusals_come_before_the_request_is_read(url: str) -> None:
    assert post(url, call(1, "ping"), **{"Content-Type": "text/plain"}).status_code == 400
    assert post(url, call(1, "ping"), Accept="text/event-stream").status_code == 406
    assert post(url, call(1, "ping"), Host="evil.example").status_code == 421
    assert post(url, call(1, "ping"), Origin="http://evil.example").status_code == 403
    huge = call(1, "tools/call", {"name": "search_mem", "arguments": {"query": "x" * 5_000_000}})
    assert post(url, huge).status_code == 413


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_sdk_client_session_and_the_agent_header(url: str, anyio_backend: str) -> None:
    async with http_session(url, headers={"X-Memvault-Agent": "ci-bot"}) as session:
        written = structured(
            await session.call_tool(
                "write_mem", {"title": "Header writer", "content": "Who wrote this."}
            )
        )
        read = structured(await session.call_tool("read_mem", {"identifier": written["id"]}))
    assert read["created_by"] == "ci-bot"
