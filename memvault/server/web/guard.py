"""The web page's safety: the server's own Host names, a bearer credential on every API
request (the page's own key, or the server's token), a same-origin check on every write (CSRF),
and a strict Content-Security-Policy on every answer, so the page loads nothing from elsewhere.

No cookie: a browser sends a cookie of 127.0.0.1 to every server on that address, whatever its
port, so the page keeps its key in its own origin's storage and sends it as a header."""

from __future__ import annotations

import base64
import hashlib
import hmac

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# What the page's key is derived from: a key that opens the page's API and never /mcp.
PAGE_KEY_LABEL = b"memvault web page"
# Served without a credential: the page's HTML and files, which hold no data.
PUBLIC_PATHS = ("/",)
PUBLIC_PREFIX = "/assets/"
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


def page_key(token: str) -> str:
    """The web page's key, derived from the server's token: the same in every copy of the
    server (`serve --processes`), accepted by the page's API and refused by /mcp."""
    digest = hmac.new(token.encode(), PAGE_KEY_LABEL, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class WebGuard:
    """Lets a request reach the page or its API only when its Host is this server's, an API
    request holds the page's key or the token (when one is set) and, for a write, it comes
    from the page itself."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings, token: str | None):
        self.app = app
        self.hosts = TransportSecurityMiddleware(security)
        self.token = token
        self.bearers = (
            [] if token is None else [f"Bearer {c}".encode() for c in (page_key(token), token)]
        )

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
            if not public(request) and not self.holds_bearer(request):
                return unauthorized()
        if write and not same_origin(request):
            return JSONResponse(
                {"error": "refused: a change must come from this server's own page"}, 403
            )
        return None

    def holds_bearer(self, request: Request) -> bool:
        """The page's key (the page) or the token (scripts) as a bearer header."""
        given = request.headers.get("authorization", "").encode()
        # Both compared, always: the time taken tells nothing of which one nearly matched.
        matches = [hmac.compare_digest(given, bearer) for bearer in self.bearers]
        return any(matches)

    def welcome(self, given: str) -> Response:
        """The URL `serve` tells a person to open (`/?token=...`): to the page with its key in
        the fragment, which the browser never sends to a server; the token is kept nowhere."""
        assert self.token is not None
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("memvault: wrong token in the URL\n", 401)
        return RedirectResponse(f"/#key={page_key(self.token)}", 303)


def public(request: Request) -> bool:
    """The page's HTML and files: served to anyone this server's Host checks let through."""
    path = request.url.path
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)


def same_origin(request: Request) -> bool:
    """A write's Origin names this very server (scheme, host and port) and it carries the
    page's header: the browser's own proof that the page sent it, not another site."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}") and CSRF_HEADER in request.headers


def unauthorized() -> Response:
    """401: a person is told which URL opens the page; a script how to send the token."""
    return JSONResponse(
        {
            "error": "unauthorized: open the URL `memvault ui` or `memvault serve` printed,"
            " or send Authorization: Bearer <token>"
        },
        401,
        headers={"WWW-Authenticate": "Bearer"},
    )
