"""The web page's safety: the server's own Host names, the token (a header, or a cookie the
page's first URL sets), a same-origin check on every write (CSRF), and a strict
Content-Security-Policy on every answer, so the page loads nothing from elsewhere."""

from __future__ import annotations

import hmac
from urllib.parse import urlencode

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "memvault_token"
# A write must carry this header: a form or an image on another site cannot add it, and a
# script there cannot send it without a CORS preflight this server never grants.
CSRF_HEADER = "x-memvault"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
READS = ("GET", "HEAD")


class WebGuard:
    """Lets a request reach the page or its API only when its Host is this server's, it holds
    the token (when one is set) and, for a write, it comes from the page itself."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings, token: str | None):
        self.app = app
        self.hosts = TransportSecurityMiddleware(security)
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a refused request here; pass the others on; add the headers to both."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            """Every answer carries the CSP and its companions."""
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        request = Request(scope)
        refusal = await self.refusal(request)
        if refusal is not None:
            await refusal(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    async def refusal(self, request: Request) -> Response | None:
        """Why this request may not pass (as the answer to send), or None."""
        write = request.method not in READS
        refused = await self.hosts.validate_request(request, is_post=write)
        if refused is not None:
            return refused
        if self.token is not None:
            given = request.query_params.get("token")
            if request.method == "GET" and request.url.path == "/" and given is not None:
                return self.welcome(given)
            if not self.holds_token(request):
                return unauthorized(request)
        if write and not same_origin(request):
            return JSONResponse(
                {"error": "refused: a change must come from this server's own page"}, 403
            )
        return None

    def holds_token(self, request: Request) -> bool:
        """The token as a bearer header (scripts) or as the page's cookie (a browser)."""
        assert self.token is not None
        header = request.headers.get("authorization", "")
        cookie = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(header.encode(), f"Bearer {self.token}".encode()) or (
            hmac.compare_digest(cookie.encode(), self.token.encode())
        )

    def welcome(self, given: str) -> Response:
        """The page's first URL (`/?token=...`): keep the token in a cookie only this server
        gets (never sent from another site's page) and go to `/`, out of the address bar."""
        assert self.token is not None
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("memvault: wrong token in the URL\n", 401)
        answer = RedirectResponse("/", 303)
        answer.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
        return answer


def same_origin(request: Request) -> bool:
    """A write's Origin names this very server (scheme, host and port) and it carries the
    page's header: the browser's own proof that the page sent it, not another site."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}") and CSRF_HEADER in request.headers


def unauthorized(request: Request) -> Response:
    """401: a person is told how to open the page; a script how to send the token."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": "unauthorized: send Authorization: Bearer <token>"}, 401)
    hint = urlencode({"token": "TOKEN"})
    return PlainTextResponse(
        f"memvault: this server needs its token; open /?{hint} (the URL `memvault ui` or"
        " `memvault serve` printed)\n",
        401,
    )
