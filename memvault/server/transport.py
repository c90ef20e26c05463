"""Run the MCP server over stdio, or over streamable HTTP with Host/Origin checks and a token."""

from __future__ import annotations

import hmac
import logging
import socket

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memvault.server.http.connections import AnswerGet, HttpLimits
from memvault.server.http.single_post import SinglePost
from memvault.server.web.app import web_app
from memvault.service.vault import VaultService

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class BearerToken:
    """Refuses HTTP requests without `Authorization: Bearer <token>` (401). The web page's
    key (web_guard.page_key), which the browser holds, is not the token: it never opens /mcp."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request holding the token on; answer any other with 401."""
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                refusal = JSONResponse(
                    {"error": "unauthorized: send Authorization: Bearer <token>"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def security_for(host: str) -> TransportSecuritySettings:
    """Accept only this server's own Host names and local browser Origins (DNS rebinding)."""
    names = {*LOCAL_HOSTS, host if ":" not in host else f"[{host}]"}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in sorted(names)] + sorted(names),
        allowed_origins=[
            f"{scheme}://{name}:*" for name in sorted(names) for scheme in ("http", "https")
        ]
        + [f"{scheme}://{name}" for name in sorted(names) for scheme in ("http", "https")],
    )


def http_app(server: MCPServer, host: str, token: str | None, vault: VaultService) -> ASGIApp:
    """The streamable HTTP app at /mcp: stateless, JSON responses, so one POST is enough (and
    a GET is answered at once: there is no event stream to hold open); a POST of one request
    is answered in its own task (http/single_post.py). Every other path is the web page
    (web/app.py), behind the same Host checks and token."""
    security = security_for(host)
    sdk_app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=host,
    )
    app = SinglePost(sdk_app, server.session_manager)
    mcp = AnswerGet(BearerToken(app, token) if token else app, MCP_PATH)
    return ByPath(mcp, web_app(vault, security, token))


class ByPath:
    """Sends /mcp and the app's lifespan to the MCP app, every other path to the web page."""

    def __init__(self, mcp: ASGIApp, web: ASGIApp):
        self.mcp = mcp
        self.web = web

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != MCP_PATH:
            await self.web(scope, receive, send)
        else:
            await self.mcp(scope, receive, send)


def serve_http(
    server: MCPServer,
    vault: VaultService,
    sock: socket.socket,
    host: str,
    token: str | None,
    limits: HttpLimits,
) -> None:
    """Serve /mcp and the web page on the socket listening.bind made for host until stopped, within
    `limits` (connections.py)."""
    from memvault.server.http.protocol import limited_protocol

    config = uvicorn.Config(
        http_app(server, host, token, vault),
        http=limited_protocol(limits),
        timeout_keep_alive=limits.idle_seconds,
        log_level="warning",
        lifespan="on",
    )
    uvicorn.Server(config).run(sockets=[sock])
