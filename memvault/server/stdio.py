"""MCP over stdio where every line gets an answer: the SDK drops a line it cannot read (not JSON,
a lone surrogate, a batch, not a JSON-RPC message) without a word, and its client waits forever.
Here such a line gets a JSON-RPC error, and the next lines are served as before."""

from __future__ import annotations

import contextvars
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
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


class Answering:
    """The transport's read stream with every unreadable line answered on `outgoing` and left
    out, so the server sees only messages."""

    def __init__(self, incoming: ReadStream[Incoming], outgoing: WriteStream[SessionMessage]):
        self.incoming = incoming
        self.outgoing = outgoing

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (the SDK's streams carry it)."""
        context: contextvars.Context | None = getattr(self.incoming, "last_context", None)
        return context

    async def receive(self) -> Incoming:
        """The next message; the unreadable lines before it are answered."""
        while True:
            item = await self.incoming.receive()
            if not isinstance(item, Exception):
                return item
            await self.outgoing.send(SessionMessage(rejection(item)))

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


async def run_stdio(server: MCPServer) -> None:
    """MCPServer.run_stdio_async with `Answering` between the transport and the server (the
    SDK has no hook for lines it cannot read, hence its low-level server)."""
    lowlevel: Any = server._lowlevel_server
    async with stdio_server() as (incoming, outgoing):
        options = lowlevel.create_initialization_options()
        await lowlevel.run(Answering(incoming, outgoing), outgoing, options)
