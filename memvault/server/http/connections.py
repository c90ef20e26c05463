"""HTTP connections that cannot pile up: a time limit for a request's headers, a deadline and a
minimum rate for its body, a time limit for idling between requests, a cap on open connections,
and a short answer to `GET /mcp`.

Without them 500 idle `GET /mcp` streams or 500 half-sent headers were all held open, and so
were 100 requests whose headers promised a body that never came (or came a byte every 10 s),
each one a slot of the cap. uvicorn closes a connection idle after a response
(`timeout_keep_alive`) and answers 503 past `limit_concurrency`, but only once a request has
arrived, and it waits for a body for ever: the protocol (protocol.py) closes a connection whose
headers or body are late, and refuses a connection past the cap at once.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Literal

from starlette.requests import ClientDisconnect
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

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
