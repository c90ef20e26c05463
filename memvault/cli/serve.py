"""`memvault serve`: the MCP server over stdio or streamable HTTP, watching the vault.

The MCP SDK is imported only here, inside the command: no other command pays for it.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING, Any, cast

import click

from memvault.activity import REQUESTS
from memvault.cli import main, settings_of
from memvault.config import Settings
from memvault.interrupt import quit_at_once
from memvault.server.http.listening import bind, fork_copies, watch_copies
from memvault.service.vault import VaultService

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


@contextmanager
def watching(vault: VaultService, enabled: bool) -> Iterator[None]:
    """Keep the index in step with edits made outside memvault while the block runs."""
    if not enabled:
        yield
        return
    from memvault.features.watch import VaultWatcher

    watcher = VaultWatcher(vault)
    watcher.start()
    try:
        yield
    finally:
        watcher.stop()


def announce(root: str, url: str | None, token: bool) -> None:
    """Tell a person at a terminal what the server is doing (stderr: stdio's stdout is the
    protocol's)."""
    if url is not None:
        click.echo(
            f"memvault: serving {root} at {url}\n"
            f"  connect an MCP client to {url} (streamable HTTP"
            f"{', header Authorization: Bearer <token>' if token else ''}),\n"
            f"  open {url.removesuffix('/mcp')}/{'?token=<token>' if token else ''} in a"
            " browser for the web page,\n"
            "  or let the client launch `memvault serve` over stdio (see README). "
            "Ctrl-C stops.",
            err=True,
        )
    elif sys.stdin.isatty():
        click.echo(
            "memvault: speaking MCP on stdin/stdout for an MCP client; nothing to type "
            "here. For a person: `memvault serve --transport http`. Ctrl-C stops.",
            err=True,
        )


# HTTP connections' limits (server/http/connections.py): option, type, default, help.
HTTP_LIMITS: tuple[tuple[str, click.ParamType[Any], float, str], ...] = (
    (
        "--header-timeout",
        click.FloatRange(min=0, min_open=True),
        10.0,
        "HTTP: seconds a connection has to send a request's headers.",
    ),
    (
        "--body-timeout",
        click.FloatRange(min=0, min_open=True),
        10.0,
        "HTTP: seconds of grace a request's body has; past them it must keep up"
        " --min-body-rate, or the connection closes (408).",
    ),
    (
        "--min-body-rate",
        click.IntRange(min=1),
        4096,
        "HTTP: bytes a second a request's body must average past --body-timeout.",
    ),
    (
        "--idle-timeout",
        click.IntRange(min=1),
        5,
        "HTTP: seconds a connection may stay idle after a response.",
    ),
    (
        "--max-connections",
        click.IntRange(min=1),
        100,
        "HTTP: open connections at most; one more is refused (503).",
    ),
)


def http_limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--header-timeout, --body-timeout, --min-body-rate, --idle-timeout and --max-connections
    (HTTP_LIMITS)."""
    for name, kind, default, text in reversed(HTTP_LIMITS):
        command = click.option(name, type=kind, default=default, show_default=True, help=text)(
            command
        )
    return command


@main.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for MCP clients that launch memvault; http to share.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", default=3000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--token",
    envvar="MEMVAULT_TOKEN",
    default=None,
    help="HTTP: require Authorization: Bearer TOKEN (env MEMVAULT_TOKEN).",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="Logs go to stderr.",
)
@click.option(
    "--scope",
    envvar="MEMVAULT_SCOPE",
    default=None,
    help="Default scope of the tools' reads and writes when a call names none "
    "(env MEMVAULT_SCOPE).",
)
@click.option(
    "--tools",
    "tools",
    envvar="MEMVAULT_TOOLS",
    default="all",
    show_default=True,
    help="The tools offered: all, core (write, read, edit, search, get_context), or tool "
    "names separated by commas (env MEMVAULT_TOOLS).",
)
@click.option(
    "--output-schemas",
    is_flag=True,
    envvar="MEMVAULT_OUTPUT_SCHEMAS",
    help="List each tool's output schema too, for programs that type results from them "
    "(a model needs none; they double the list's size).",
)
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="HTTP: server processes sharing the port; each runs tool calls under its own "
    "Python lock, so one a core answers more calls at once.",
)
@http_limit_options
@click.option("--no-watch", is_flag=True, help="Do not watch the vault for outside edits.")
@click.pass_context
def serve(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    log_level: str,
    scope: str | None,
    tools: str,
    output_schemas: bool,
    processes: int,
    header_timeout: float,
    body_timeout: float,
    min_body_rate: int,
    idle_timeout: int,
    max_connections: int,
    no_watch: bool,
) -> None:
    """Serve the vault to MCP clients (stdio by default, or streamable HTTP at /mcp).

    The index is synced with the files at start and, unless --no-watch, kept in step while
    serving by watching the vault for edits made in Obsidian or any other program."""
    if processes > 1 and transport != "http":
        raise click.BadParameter("more than 1 needs --transport http", param_hint="--processes")
    logging.getLogger().setLevel(log_level)
    settings = settings_of(ctx)
    limits = (header_timeout, body_timeout, min_body_rate, idle_timeout, max_connections)
    listen = Listen(host, port, token, processes, limits) if transport == "http" else None
    with suppress(KeyboardInterrupt):  # Ctrl-C: a normal stop, exit 0
        offer = Offer(tools, output_schemas)
        run_server(settings, listen, log_level, not no_watch, scope, offer)


@dataclass(frozen=True)
class Offer:
    """What tools/list holds: the tools (--tools: all, core or names) and whether their
    output schemas (--output-schemas)."""

    tools: str = "all"
    output_schemas: bool = False


@dataclass(frozen=True)
class Listen:
    """Serve over HTTP: where, with which token, in how many processes, within which limits
    (header timeout, body timeout and rate, idle timeout, connections)."""

    host: str
    port: int
    token: str | None
    processes: int
    limits: tuple[float, float, int, int, int]


def run_server(
    settings: Settings,
    listen: Listen | None,
    log_level: str,
    watch: bool,
    scope: str | None = None,
    offer: Offer | None = None,
) -> None:
    """Start the vault and serve it until stopped, over HTTP as `listen` says or else stdio
    (`scope`: the tools' default scope; `offer`: which tools, as --tools says).
    Over HTTP the port is taken first, so a busy one is the only thing said, and then the
    server's copies are forked (server/http/listening.py)."""
    # Ctrl-C while starting ends the process at once, as a crash would (every start repairs
    # that): unwinding through the worker pool below would end with a traceback.
    signal.signal(signal.SIGINT, quit_at_once)
    http = None if listen is None else (listen, bind(listen.host, listen.port))
    copy, others = (0, []) if listen is None else fork_copies(listen.processes)
    REQUESTS.own(copy)  # each copy counts its requests apart; the copy that embeds reads all
    # A child process looks for what changed on disk while this one imports the MCP SDK: most
    # of a second each at 100k notes, which no other command pays (hence the import here).
    try:
        starting = VaultService.start(settings)
        from memvault.server.mcp_server import LogLevel, build_server, chosen_tools

        if http is not None:  # uvicorn, starlette and the page: 70 ms stdio need not pay
            importlib.import_module("memvault.server.transport")

        vault, done = starting.finish()
    except Exception:
        if copy:  # the first process says why the vault cannot start, once
            os._exit(1)
        raise
    watch_copies(others)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for line in done.lines() if copy == 0 else []:
        click.echo(f"memvault: {line}", err=True)
    with closing(vault), watching(vault, watch):
        server = build_server(
            vault,
            cast(LogLevel, log_level),
            settings.context,
            scope or None,
            settings.agent,
            chosen_tools(offer.tools if offer else "all"),
            offer is not None and offer.output_schemas,
        )
        signal.signal(signal.SIGTERM, partial(stop, vault))
        if http is not None:
            serve_over_http(server, vault, *http, announcing=copy == 0)
            return
        announce(str(vault.root), None, False)
        from memvault.server.stdio import serve_stdio

        serve_stdio(server)


def serve_over_http(
    server: MCPServer,
    vault: VaultService,
    listen: Listen,
    listening: socket.socket,
    announcing: bool,
) -> None:
    """Serve on the socket taken for `listen` until stopped, saying where first if
    `announcing` (the first of the server's processes)."""
    from memvault.server.http.connections import HttpLimits
    from memvault.server.transport import MCP_PATH, serve_http

    host = listen.host if ":" not in listen.host else f"[{listen.host}]"
    if announcing:
        announce(str(vault.root), f"http://{host}:{listen.port}{MCP_PATH}", bool(listen.token))
    serve_http(server, vault, listening, listen.host, listen.token, HttpLimits(*listen.limits))


def stop(vault: VaultService, signum: int, frame: FrameType | None) -> None:
    """SIGTERM: close the vault (which saves the uses counted in memory) and exit. Over HTTP
    uvicorn first shuts down gracefully, then raises the signal again, which lands here. Over
    stdio it comes at once, and not by unwinding: the MCP SDK reads stdin on a thread no
    cancel reaches, so that would wait for the next line of input."""
    vault.close()
    os._exit(0)
