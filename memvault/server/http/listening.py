"""The HTTP server's listening socket, and the copies of the server that share it.

A tool call's Python work runs under its process's GIL (about 4.8 ms a call of the mixed load), so
one server process answered about 280 calls/s on 2 cores where two sharing the socket answered 355
(benchmarks/results/2026-11-24-mixed-load.md). Each copy is a whole server of the vault: the index,
the vault lock and the turn to embed are shared as between any servers of one vault, and the kernel
hands each new connection to one copy. This module imports no MCP SDK, so the socket is taken, and
the copies made, before the vault opens.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import threading

from memvault.errors import Invalid, MemvaultError
from memvault.parent_death import end_with_parent

log = logging.getLogger(__name__)


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


def fork_copies(count: int) -> tuple[int, list[int]]:
    """Fork `count` - 1 copies of this process; which one this is (0: the first, which the
    others end with: each gets SIGTERM, a normal stop, when it dies) and, in the first, the
    others' pids. Call it before any thread or child process starts: a fork copies the calling
    thread alone."""
    if count == 1:
        return 0, []
    if not hasattr(os, "fork"):
        raise Invalid("--processes above 1 needs a system with fork (Linux, macOS); use 1")
    if threading.active_count() != 1:
        raise RuntimeError("fork_copies needs a process running one thread")
    first, others = os.getpid(), []
    for number in range(1, count):
        pid = os.fork()
        if pid == 0:
            end_with_parent(first, signal.SIGTERM)
            return number, []
        others.append(pid)
    return 0, others


def watch_copies(pids: list[int]) -> None:
    """In the first process: collect each copy when it ends, so that none stays a zombie, and
    log one that died (a copy stopped normally exits 0); the others go on serving the port."""
    for pid in pids:
        threading.Thread(target=_collect, args=(pid,), name=f"copy-{pid}", daemon=True).start()


def _collect(pid: int) -> None:
    """Wait for one copy to end; a warning unless it stopped normally."""
    try:
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:
        return
    if code < 0:
        how = f"killed by signal {-code}, {signal.strsignal(-code)}"
    elif code:
        how = f"exit code {code}"
    else:
        return
    log.warning("server copy %d ended (%s); the other copies go on serving the port", pid, how)
