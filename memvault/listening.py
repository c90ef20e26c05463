"""The HTTP server's listening socket, and the copies of the server that share it.

A tool call's Python work runs under its process's GIL (about 4.8 ms a call of the mixed
load), so one server process answered about 280 calls/s on 2 cores where two sharing the
socket answered 355 (benchmarks/README.md). Each copy is a whole server of the vault: the
index, the vault lock and the turn to embed are shared as between any servers of one vault,
and the kernel hands each new connection to one copy. This module imports no MCP SDK, so the
socket is taken, and the copies made, before the vault opens.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import threading

from .errors import Invalid, MemvaultError
from .parent import end_with_parent


def bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket ourselves, so a busy port is one clear error. It is made as
    TCP with Nagle's algorithm off: asyncio's loop turns Nagle off only on sockets made as TCP
    (protocol 6, not 0), and with it on a client that keeps its connection waited for a delayed
    ACK, about 40 ms a call."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise MemvaultError(
                f"port {port} on {host} is already in use; stop the other server or pass --port"
            ) from exc
        raise MemvaultError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


def fork_copies(count: int) -> int:
    """Fork `count` - 1 copies of this process; which one this is (0: the first, which the
    others end with: each gets SIGTERM, a normal stop, when it dies). Call it before any thread
    or child process starts: a fork copies the calling thread alone."""
    if count == 1:
        return 0
    if not hasattr(os, "fork"):
        raise Invalid("--processes above 1 needs a system with fork (Linux, macOS); use 1")
    if threading.active_count() != 1:
        raise RuntimeError("fork_copies needs a process running one thread")
    first = os.getpid()
    for number in range(1, count):
        if os.fork() == 0:
            end_with_parent(first, signal.SIGTERM)
            return number
    return 0
