"""The local web page at `/`: its files (shipped in the package, memvault/web/) and its JSON
API (web_api.py), behind the page's guard (web_guard.py)."""

from __future__ import annotations

from importlib.resources import files

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from memvault.server.busy import MarkedPage
from memvault.server.web.api import WebApi
from memvault.server.web.guard import WebGuard
from memvault.service.vault import VaultService

ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "render.js": "text/javascript; charset=utf-8",
}


def asset(name: str) -> bytes:
    """One of the page's files, as shipped in the package."""
    return files("memvault.server.web.static").joinpath(name).read_bytes()


def page(request: Request) -> Response:
    """The page itself (one document; the views are switched by the URL's #fragment)."""
    return Response(asset("index.html"), media_type="text/html; charset=utf-8")


def static(request: Request) -> Response:
    """A script or style sheet of the page; nothing else under /assets/."""
    name = request.path_params["name"]
    if name not in ASSETS:
        return Response("not found\n", 404, media_type="text/plain")
    return Response(asset(name), media_type=ASSETS[name])


def web_app(vault: VaultService, security: TransportSecuritySettings, token: str | None) -> ASGIApp:
    """The page, its files and its API, each request checked by the guard and marked while it
    is answered (busy.py: a first embedding waits for the server to be quiet)."""
    routes = [
        Route("/", page, methods=["GET"]),
        Route("/assets/{name}", static, methods=["GET"]),
        *WebApi(vault).routes(),
    ]
    return MarkedPage(WebGuard(Starlette(routes=routes), security, token))
