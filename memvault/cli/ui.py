"""`memvault ui`: the web page for a person, on a free local port, opened in the browser."""

from __future__ import annotations

import secrets
import socket
import threading
import webbrowser

import click

from . import main
from .serve import serve


def free_port(host: str) -> int:
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@main.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="0: a free port.")
@click.option("--no-browser", is_flag=True, help="Print the page's URL; open no browser.")
@click.pass_context
def ui(ctx: click.Context, port: int, no_browser: bool) -> None:
    """Open the vault's web page: search, read, edit, review and link memories.

    It serves the vault on 127.0.0.1 (MCP at /mcp too) with a fresh token that only the
    printed URL carries, and opens that URL in the browser. Ctrl-C stops."""
    host = "127.0.0.1"
    port = port or free_port(host)
    token = secrets.token_urlsafe(24)
    url = f"http://{host}:{port}/?token={token}"
    click.echo(f"memvault: the web page is at {url}", err=True)
    if not no_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    ctx.invoke(serve, transport="http", host=host, port=port, token=token)
