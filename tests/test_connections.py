"""HTTP connections cannot pile up: half-sent headers and idle connections are closed, a
connection past the cap is refused, and GET /mcp is answered at once (a real server process
and raw sockets)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memvault.listening import bind

from .mcp_helpers import http_server

WAIT = 20  # seconds a socket waits for the server: generous, not a timing assertion


@pytest.fixture
def port(vault_dir: Path) -> Iterator[int]:
    limits = ("--header-timeout", "1", "--idle-timeout", "1", "--max-connections", "3")
    with http_server(vault_dir, *limits) as (url, _):
        yield int(urlsplit(url).port or 0)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or resets it: a socket
    closed with unread bytes does that)."""
    received = b""
    with suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def request(method: str, port: int, accept: str, body: bytes = b"") -> bytes:
    head = (
        f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: {accept}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def test_half_sent_headers_are_closed_after_the_header_timeout(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        assert read_all(sock) == b""


def test_a_connection_idle_after_its_answer_is_closed(port: int) -> None:
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    with connect(port) as sock:
        sock.sendall(request("POST", port, "application/json, text/event-stream", ping))
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.endswith(b'{"jsonrpc":"2.0","id":1,"result":{}}')


@pytest.mark.parametrize(
    ("accept", "says"), [("text/event-stream", b"send MCP requests by POST"), ("text/html", b"<p>")]
)
def test_get_mcp_is_answered_at_once_not_held_open(port: int, accept: str, says: bytes) -> None:
    with connect(port) as sock:
        sock.sendall(request("GET", port, accept))
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 405")
    assert b"allow: POST" in answer
    assert says in answer


def test_a_connection_past_the_cap_is_refused_and_a_freed_slot_serves_again(port: int) -> None:
    answered(port)  # the server has let go of the helper's probe that it was up
    with ExitStack() as stack:
        held = [stack.enter_context(connect(port)) for _ in range(3)]
        for sock in held:
            sock.sendall(b"GET /mcp HTTP/1.1\r\n")
        with connect(port) as extra:
            refused = read_all(extra)
        assert refused.startswith(b"HTTP/1.1 503")
        assert b"3 connections are open; try again later" in refused
        # The server lets go of a connection before its socket closes: once the header timeout
        # has closed these, their slots are free.
        assert [read_all(sock) for sock in held] == [b"", b"", b""]
    answered(port)


def answered(port: int) -> None:
    """One GET /mcp, answered and closed."""
    with connect(port) as sock:
        sock.sendall(request("GET", port, "text/html"))
        assert read_all(sock).startswith(b"HTTP/1.1 405")


def test_connections_send_without_waiting_for_an_ack() -> None:
    """The listening socket is TCP with Nagle's algorithm off, so every connection is: the event
    loop only turns it off on sockets made as TCP, and without it a client that keeps its
    connection (as MCP clients do) waited for a delayed ACK, about 40 ms a call."""
    listener = bind("127.0.0.1", 0)
    listener.listen()
    with listener, socket.create_connection(listener.getsockname()):
        accepted, _ = listener.accept()
        with accepted:
            assert accepted.proto == socket.IPPROTO_TCP
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_refusal_at_a_cap_of_one_says_one_connection(vault_dir: Path) -> None:
    limits = ("--header-timeout", "5", "--max-connections", "1")
    with http_server(vault_dir, *limits) as (url, _):
        port = int(urlsplit(url).port or 0)
        while True:  # until the server has let go of the helper's probe that it was up
            with connect(port) as probe:
                probe.sendall(request("GET", port, "text/html"))
                if read_all(probe).startswith(b"HTTP/1.1 405"):
                    break
        with connect(port) as held:
            held.sendall(b"GET /mcp HTTP/1.1\r\n")
            with connect(port) as extra:
                refused = read_all(extra)
    assert b"memvault: 1 connection is open; try again later" in refused
