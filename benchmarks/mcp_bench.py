"""memvault as an assistant sees it: MCP over stdio (the SDK's client) and over HTTP."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult
from measure import MEMVAULT

START_TIMEOUT = 300.0


def base_args(vault: Path, index: Path) -> list[str]:
    """The global options that point memvault at a vault and an index file."""
    return ["--vault", str(vault), "--index-path", str(index)]


def checked(result: CallToolResult) -> CallToolResult:
    """The result, unless the tool answered an error."""
    if result.is_error:
        raise RuntimeError(f"tool error: {result.content}")
    return result


def memvault_stdio(vault: Path, index: Path) -> StdioServerParameters:
    """How an MCP client launches `memvault serve --no-watch` over stdio."""
    return StdioServerParameters(
        command=MEMVAULT,
        args=[*base_args(vault, index), "serve", "--no-watch"],
        env=dict(os.environ),
    )


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def initialize_answered(params: StdioServerParameters) -> tuple[float, float]:
    """Seconds from spawning the server to its answer to `initialize` (what an MCP client waits
    for before its first call), and the CPU seconds the server process used by then."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=params.env,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    process.stdin.flush()
    answer = process.stdout.readline()
    wall = time.perf_counter() - started
    with open(f"/proc/{process.pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    process.stdin.close()
    process.wait()
    assert b'"result"' in answer, answer
    return wall, cpu


@asynccontextmanager
async def stdio_session(
    params: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession with the server `params` launches over stdio."""
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def first_answer(
    params: StdioServerParameters, query: dict[str, Any], errlog: TextIO
) -> float:
    """Seconds from launching the server to the answer of its first search_mem."""
    started = time.perf_counter()
    async with stdio_session(params, errlog) as session:
        checked(await session.call_tool("search_mem", query))
        return time.perf_counter() - started


async def call_times(
    params: StdioServerParameters, name: str, calls: list[dict[str, Any]], errlog: TextIO
) -> list[float]:
    """Seconds each call of tool `name` takes in one session, after three unmeasured ones."""
    return await sequence_times(params, [(name, arguments) for arguments in calls], errlog)


async def sequence_times(
    params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]], errlog: TextIO
) -> list[float]:
    """Seconds each (tool, arguments) call takes in one session, in turn, after the first
    three, unmeasured: calls of several tools taken alternately meet the same machine."""
    async with stdio_session(params, errlog) as session:
        for name, arguments in calls[:3]:
            checked(await session.call_tool(name, arguments))
        times = []
        for name, arguments in calls[3:]:
            started = time.perf_counter()
            checked(await session.call_tool(name, arguments))
            times.append(time.perf_counter() - started)
        return times


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http(
    vault: Path,
    index: Path,
    port: int,
    errlog: TextIO,
    processes: int = 1,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """`memvault serve --transport http` on 127.0.0.1:port in `processes`, without watching,
    in `env` (None: this process's environment)."""
    command = [MEMVAULT, *base_args(vault, index), "serve", "--transport", "http"]
    return subprocess.Popen(
        [*command, "--port", str(port), "--processes", str(processes), "--no-watch"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=errlog,
        env=env,
    )


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    """Return once the server accepts connections; fail if it died or took too long."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not start") from None
            time.sleep(0.05)


def tool_request(name: str, arguments: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """The body and headers of one raw JSON-RPC tools/call POST."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    return json.dumps(body).encode(), headers


def tool_answer(raw: bytes) -> None:
    """Raise unless a tools/call answer says the tool succeeded."""
    result = json.loads(raw)["result"]
    if result.get("isError"):
        raise RuntimeError(result["content"][0]["text"])


def post_tool(port: int, name: str, arguments: dict[str, Any]) -> None:
    """One raw JSON-RPC tools/call POST on a new connection; raises unless the tool
    succeeded."""
    data, headers = tool_request(name, arguments)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        tool_answer(response.read())


class KeptConnection:
    """One HTTP connection kept open across calls, as an MCP client's HTTP library keeps it
    (a new connection a call costs the server and the client an accept, a close and a
    protocol object each)."""

    def __init__(self, port: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post_tool(self, name: str, arguments: dict[str, Any]) -> None:
        """One tools/call on the kept connection; raises unless the tool succeeded."""
        data, headers = tool_request(name, arguments)
        self.connection.request("POST", "/mcp", body=data, headers=headers)
        response = self.connection.getresponse()
        raw = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {raw[:200]!r}")
        tool_answer(raw)

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def writer_thread(
    port: int, calls: list[dict[str, Any]], errors: list[str], start: threading.Barrier
) -> None:
    """Post every write_mem call in turn after all writers are ready; collect failures."""
    start.wait()
    for arguments in calls:
        try:
            post_tool(port, "write_mem", arguments)
        except Exception as exc:
            errors.append(f"port {port}: {exc}")


def concurrent_writes(
    vault: Path,
    index: Path,
    make: Callable[[str], dict[str, Any]],
    servers: int,
    each: int,
    errlog: TextIO,
) -> tuple[float, list[str]]:
    """Writes per second of `servers` HTTP servers on one vault, each sent `each` write_mem
    calls by its own client thread at once, and the errors seen."""
    ports = [free_port() for _ in range(servers)]
    processes = [start_http(vault, index, port, errlog) for port in ports]
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_listening(port, process)
        errors: list[str] = []
        start = threading.Barrier(servers + 1)
        threads = [
            threading.Thread(
                target=writer_thread,
                args=(port, [make(f"w{i}") for _ in range(each)], errors, start),
            )
            for i, port in enumerate(ports)
        ]
        for thread in threads:
            thread.start()
        start.wait()
        started = time.perf_counter()
        for thread in threads:
            thread.join()
        done = servers * each - len(errors)
        return done / (time.perf_counter() - started), errors
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
