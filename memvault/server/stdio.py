"""MCP over stdio where every line gets an answer: the SDK drops a line it cannot read (not JSON,
a lone surrogate, a batch, not a JSON-RPC message) without a word, and takes a request whose id
is no string or integer (an object, a list, a boolean, a fraction, null) for a notification, which
it never answers; its client waits forever. Here such a line gets a JSON-RPC error, and the next
lines are served as before."""

from __future__ import annotations

import contextvars
import json
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import IO, Any, Self

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import _claim_fd, _open_stdin_diversion, _UnownedTextWrapper, stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCNotification
from pydantic import ValidationError

Incoming = SessionMessage | Exception


def rejection(error: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read: a parse error (id null) when
    it is not JSON, else an invalid request, with the line's id when it has a usable one."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or any(p["type"] == "json_invalid" for p in problems):
        data = ErrorData(
            code=PARSE_ERROR,
            message="Parse error: a line is not valid JSON (or holds a lone UTF-16 surrogate);"
            " send one JSON-RPC message per line",
        )
        return JSONRPCError(jsonrpc="2.0", id=None, error=data)
    given = next((p["input"] for p in problems if isinstance(p["input"], dict)), None)
    found = given.get("id") if given is not None else None
    ident = found if isinstance(found, str | int) and not isinstance(found, bool) else None
    batch = any(isinstance(p["input"], list) for p in problems)
    data = ErrorData(
        code=INVALID_REQUEST,
        message="Invalid request: batches are not supported; send one message per line"
        if batch
        else "Invalid request: not a JSON-RPC 2.0 request, notification or response",
    )
    return JSONRPCError(jsonrpc="2.0", id=ident, error=data)


def unanswerable(message: SessionMessage, line: str) -> JSONRPCError | None:
    """The invalid-request error (id null, as JSON-RPC asks when the id is unusable) for a
    notification the client sent with an id: a request whose id the SDK's models dropped;
    None for any other message."""
    if not isinstance(message.message, JSONRPCNotification) or "id" not in json.loads(line):
        return None
    data = ErrorData(
        code=INVALID_REQUEST,
        message="Invalid request: a request's id must be a string or an integer",
    )
    return JSONRPCError(jsonrpc="2.0", id=None, error=data)


class KeptLines(anyio.AsyncFile[str]):
    """stdin as the SDK's transport reads it, each line kept until its message is received: the
    SDK makes one message (or error) of every line, and only the line still shows a bad id."""

    def __init__(self, fp: IO[str]) -> None:
        super().__init__(fp)
        self.unreceived: deque[str] = deque()

    async def readline(self) -> str:
        """The next line, kept for `Answering` (the SDK's `async for` reads through this)."""
        line = await super().readline()
        if line:
            self.unreceived.append(line)
        return line


class Answering:
    """The transport's read stream with every line that cannot be answered normally answered
    with an error on `outgoing` and left out, so the server sees only messages it can answer."""

    def __init__(
        self,
        incoming: ReadStream[Incoming],
        outgoing: WriteStream[SessionMessage],
        lines: KeptLines,
    ):
        self.incoming = incoming
        self.outgoing = outgoing
        self.lines = lines

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (the SDK's streams carry it)."""
        context: contextvars.Context | None = getattr(self.incoming, "last_context", None)
        return context

    async def receive(self) -> Incoming:
        """The next message; the lines before it that cannot be answered normally get errors."""
        while True:
            item = await self.incoming.receive()
            line = self.lines.unreceived.popleft()
            error = rejection(item) if isinstance(item, Exception) else unanswerable(item, line)
            if error is None:
                return item
            await self.outgoing.send(SessionMessage(error))

    async def aclose(self) -> None:
        await self.incoming.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


@asynccontextmanager
async def claimed_stdin() -> AsyncIterator[KeptLines]:
    """stdin claimed as the SDK's `stdio_server` claims it (fd 0 points at the null device while
    serving, so nothing else reads the client's lines), read as `KeptLines`."""
    buffer, release = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
    try:
        yield KeptLines(_UnownedTextWrapper(buffer, encoding="utf-8", errors="replace"))
    finally:
        if release is not None:
            release()


def serve_stdio(server: MCPServer) -> None:
    """Serve over stdin and stdout until stdin closes; every line gets an answer."""
    anyio.run(run_stdio, server)


async def run_stdio(server: MCPServer) -> None:
    """MCPServer.run_stdio_async with `Answering` between the transport and the server (the
    SDK has no hook for lines it cannot answer, hence its low-level server and its stdin)."""
    lowlevel: Any = server._lowlevel_server
    async with claimed_stdin() as lines, stdio_server(stdin=lines) as (incoming, outgoing):
        options = lowlevel.create_initialization_options()
        await lowlevel.run(Answering(incoming, outgoing, lines), outgoing, options)
