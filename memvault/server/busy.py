"""Every request the server answers, marked in this process's request activity
(memvault/activity.py), which its background embedding waits on: MCP's on any transport (a
middleware of the SDK, around each request's handling) and the web page's (around each HTTP
request)."""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from starlette.types import ASGIApp, Receive, Scope, Send

from memvault.activity import REQUESTS


class MarkedRequests:
    """The SDK's middleware that marks each MCP request while it is answered (a notification
    asks for no answer: it is not marked)."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        with REQUESTS.request():
            return await call_next(ctx)


class MarkedPage:
    """The web page's app, each HTTP request marked while it is answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with REQUESTS.request():
            await self.app(scope, receive, send)
