"""Real MCP servers in subprocesses, and SDK client sessions connected to them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation

from .conftest import patience

MEMVAULT = [sys.executable, "-m", "memvault.cli"]


def server_env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8"}


@asynccontextmanager
async def stdio_session(
    vault: Path, client_name: str | None = None, *options: str, serving: Sequence[str] = ()
) -> AsyncIterator[ClientSession]:
    """A ClientSession talking to `memvault serve` over stdio, as Claude Desktop runs it;
    `client_name` is the clientInfo.name it sends, `options` global options of the server,
    `serving` options of `serve`."""
    params = StdioServerParameters(
        command=MEMVAULT[0],
        args=[*MEMVAULT[1:], "--vault", str(vault), *options, "serve", *serving],
        env=server_env(),
    )
    info = Implementation(name=client_name, version="1") if client_name else None
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, client_info=info) as session,
        ):
            await session.initialize()
            yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(vault: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`memvault serve --transport http` on a free port; yields its /mcp URL and process."""
    port = free_port()
    process = subprocess.Popen(
        [
            *MEMVAULT,
            "--vault",
            str(vault),
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            *extra,
        ],
        env=server_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + patience(30)
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server did not start: {process.communicate()}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.terminate()
        process.wait(timeout=patience(10))
        if process.stdout:
            process.stdout.close()
        if process.stderr:
            process.stderr.close()


@asynccontextmanager
async def http_session(
    url: str, token: str | None = None, headers: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    headers = {**(headers or {}), **({"Authorization": f"Bearer {token}"} if token else {})}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=patience(30)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def tool_error(session: ClientSession, name: str, args: dict[str, Any]) -> str:
    """The text of a tool call that must fail."""
    result = await session.call_tool(name, args)
    assert result.is_error, (name, args)
    return text_of(result)


def raw_call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON-RPC messages a raw stdio client sends to initialize and call tool `name`
    (id 2; the initialize request is id 1)."""
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        },
    ]


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return dict(result.structured_content)
