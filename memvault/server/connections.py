"""HTTP connections that cannot pile up: a time limit for a request's headers and for idling
between requests, a cap on open connections, and a short answer to `GET /mcp`.

Without them 500 idle `GET /mcp` streams or 500 half-sent headers were all held open. uvicorn
closes a connection idle after a response (`timeout_keep_alive`) and answers 503 past
`limit_concurrency`, but only once a request has arrived: a connection that never finishes its
headers stays, so the protocol here closes it, and refuses a connection past the cap at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..words import count

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s"
)
BROWSER_PAGE = (
    "<!doctype html><title>memvault</title><p>This is memvault's MCP endpoint. Connect an MCP"
    " client to this URL (streamable HTTP, POST); there is nothing to see in a browser.</p>"
)


@dataclass(frozen=True)
class HttpLimits:
    """A connection has `header_seconds` to send a request's headers and may idle
    `idle_seconds` after a response; at most `connections` are open at once."""

    header_seconds: float
    idle_seconds: int
    connections: int


def limited_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the header time limit and the connection cap of `limits`
    (h11 is imported here, when serving HTTP: stdio's start does not pay for it)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Limited(H11Protocol):
        """Closes a connection that has not sent a request's headers in time; refuses one past
        the cap with a 503 before reading anything."""

        deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.connections:
                open_now = count(limits.connections, "connection")
                verb = "is" if limits.connections == 1 else "are"
                text = f"memvault: {open_now} {verb} open; try again later\n"
                body = text.encode()
                transport.write(REFUSAL % (len(body), body))
                transport.close()
                return
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.cycle is None or self.cycle.response_complete:
                self._await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            """Start the clock for the next request's headers (once: bytes do not reset it)."""
            if self.deadline is None:
                self.deadline = self.loop.call_later(limits.header_seconds, self._too_slow)

        def _stop_waiting(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _too_slow(self) -> None:
            """The headers did not come in time: close the connection."""
            self.deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return Limited


class AnswerGet:
    """Answers `GET` at the MCP path at once with 405 (the server sends no event stream: it is
    stateless), and a browser with a line saying what the URL is for."""

    def __init__(self, app: ASGIApp, path: str):
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == self.path:
            accept = dict(scope["headers"]).get(b"accept", b"")
            headers = {"Allow": "POST"}
            answer: Response = (
                HTMLResponse(BROWSER_PAGE, 405, headers)
                if b"text/html" in accept
                else PlainTextResponse(
                    "memvault: no event stream here; send MCP requests by POST\n", 405, headers
                )
            )
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)
