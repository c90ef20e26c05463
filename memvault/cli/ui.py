"""`memvault ui`: the web page for a person, on a free local port, opened in the browser."""

from __future__ import annotations

import secrets
import socket
import threading
import webbrowser

import click

from memvault.cli import main
from memvault.cli.serve import serve


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

    It serves the vault on 127.0.0.1 with a fresh token told to no one, and opens the
    printed URL, whose #key opens only the page's API (never /mcp). Ctrl-C stops."""
    # The server's modules import the MCP SDK: only a command that serves pays for that.
    from memvault.server.web.guard import page_key

    host = "127.0.0.1"
    port = port or free_port(host)
    token = secrets.token_urlsafe(24)
    # The key rides in the fragment, which the browser never sends to a server or logs.
    url = f"http://{host}:{port}/#key={page_key(token)}"
    click.echo(f"memvault: the web page is at {url}", err=True)
    if not no_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    ctx.invoke(serve, transport="http", host=host, port=port, token=token)
