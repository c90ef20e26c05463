"""HTTP connections that cannot pile up: a time limit for a request's headers, a deadline and a
minimum rate for its body, a time limit for idling between requests, a cap on open connections,
and a short answer to `GET /mcp`.

Without them 500 idle `GET /mcp` streams or 500 half-sent headers were all held open, and so
were 100 requests whose headers promised a body that never came (or came a byte every 10 s),
each one a slot of the cap. uvicorn closes a connection idle after a response
(`timeout_keep_alive`) and answers 503 past `limit_concurrency`, but only once a request has
arrived, and it waits for a body for ever: the protocol here closes a connection whose headers
or body are late, and refuses a connection past the cap at once.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from starlette.requests import ClientDisconnect
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from memvault.words import count

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

BROWSER_PAGE = (
    "<!doctype html><title>memvault</title><p>This is memvault's MCP endpoint. Connect an MCP"
    " client to this URL (streamable HTTP, POST); there is nothing to see in a browser.</p>"
)
TOO_SLOW = (
    "memvault: the request's body did not come in time (the server's --body-timeout and"
    " --min-body-rate); connection closed\n"
)


@dataclass(frozen=True)
class HttpLimits:
    """A connection has `header_seconds` to send a request's headers, and `body_seconds` plus
    one second for every `body_rate` bytes to send its body; it may idle `idle_seconds` after
    a response; at most `connections` are open at once."""

    header_seconds: float
    body_seconds: float
    body_rate: int
    idle_seconds: int
    connections: int


@dataclass
class Clock:
    """What a connection is waiting for, since when: it is due `grace` seconds after `since`,
    plus `per_byte` seconds for each byte `received` since."""

    waiting_for: Literal["headers", "body"]
    since: float
    grace: float
    per_byte: float
    received: int = 0

    def due(self) -> float:
        """The loop time by which the connection must have moved on."""
        return self.since + self.grace + self.received * self.per_byte


def short_answer(status: str, text: str, *headers: str) -> bytes:
    """A whole plain-text HTTP answer, written straight to a connection that then closes (no
    app answers it)."""
    body = text.encode()
    head = [f"HTTP/1.1 {status}", "Content-Type: text/plain; charset=utf-8", "Connection: close"]
    head += [*headers, f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(head).encode() + body


def limited_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the header and body time limits and the connection cap of
    `limits` (h11 is imported here, when serving HTTP: stdio's start does not pay for it)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Limited(H11Protocol):
        """Closes a connection that has not sent a request's headers, or its body, in time;
        refuses one past the cap with a 503 before reading anything."""

        clock: Clock | None = None
        timer: asyncio.TimerHandle | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.app = EndsWhenGone(self.app)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.connections:
                open_now = count(limits.connections, "connection")
                verb = "is" if limits.connections == 1 else "are"
                text = f"memvault: {open_now} {verb} open; try again later\n"
                transport.write(short_answer("503 Service Unavailable", text, "Retry-After: 1"))
                transport.close()
                return
            self._follow(0)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow(len(data))

        def on_response_complete(self) -> None:
            # A pipelined request may start here, its body still to come, with no bytes to
            # come through data_received: its clock starts now.
            super().on_response_complete()
            self._follow(0)

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop()
            super().connection_lost(exc)

        def _waiting_for(self) -> Literal["headers", "body"] | None:
            """What the connection owes now: the next request's headers, the body of the one
            under way, or nothing while the app answers."""
            if self.transport.is_closing():
                return None
            if self.cycle is None or self.cycle.response_complete:
                return "headers"
            return "body" if self.cycle.more_body else None

        def _follow(self, received: int) -> None:
            """Keep the clock the connection's state calls for, counting `received` bytes: the
            headers' clock runs from the end of the last answer (bytes do not extend it), the
            body's from the end of the headers (each byte extends it)."""
            waiting_for = self._waiting_for()
            if waiting_for is None:
                self._stop()
            elif self.clock is None or self.clock.waiting_for != waiting_for:
                self._start(waiting_for)
            else:
                self.clock.received += received

        def _start(self, waiting_for: Literal["headers", "body"]) -> None:
            """Start the clock for what the connection owes now (a body's counts the bytes of
            it already here, which the app has not taken yet)."""
            self._stop()
            now = self.loop.time()
            if waiting_for == "headers":
                self.clock = Clock(waiting_for, now, limits.header_seconds, 0.0)
            else:
                per_byte = 1 / limits.body_rate
                came = len(self.cycle.body)
                self.clock = Clock(waiting_for, now, limits.body_seconds, per_byte, came)
            self.timer = self.loop.call_at(self.clock.due(), self._check)

        def _stop(self) -> None:
            """Stop the clock: the connection owes nothing now, or is gone."""
            if self.timer is not None:
                self.timer.cancel()
            self.clock = self.timer = None

        def _check(self) -> None:
            """The clock's first due time came: wait on if bytes have moved it since, else
            close the connection (with a 408 if a body was late and nothing answered yet)."""
            clock, self.timer = self.clock, None
            if clock is None:
                return
            if clock.waiting_for == "body" and self.flow.read_paused:
                # The server stopped reading (the app has not taken the body that came): the
                # client is not the slow one, so its clock starts again.
                self._start("body")
                return
            if self.loop.time() < clock.due():
                self.timer = self.loop.call_at(clock.due(), self._check)
                return
            self.clock = None
            if clock.waiting_for == "body" and not self.cycle.response_started:
                self.transport.write(short_answer("408 Request Timeout", TOO_SLOW))
            self.transport.close()

    return Limited


class EndsWhenGone:
    """Ends a request quietly when its client is gone before its body came (the body's clock
    closed the connection, or the client left): nobody is left to answer, and uvicorn would
    log a traceback for each, 100 of them for 100 late bodies."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with suppress(ClientDisconnect):
            await self.app(scope, receive, send)


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
