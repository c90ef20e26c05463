"""HTTP connections cannot pile up: half-sent headers, bodies that never come or trickle in,
and idle connections are closed, a connection past the cap is refused, and GET /mcp is answered
at once (a real server process and raw sockets)."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memvault.server.http.listening import bind

from .conftest import patience
from .mcp_helpers import http_server

WAIT = patience(20)  # seconds a socket waits for the server: generous, not a timing assertion
CAP = 3  # the test server's --max-connections
MCP_ACCEPT = "application/json, text/event-stream"
TRICKLE = 0.05  # seconds between the bytes of a trickled body: 20 bytes/s, far below the minimum


LIMITS = (
    *("--header-timeout", "1", "--idle-timeout", "1", "--max-connections", str(CAP)),
    *("--body-timeout", "1", "--min-body-rate", "10000"),
)


@pytest.fixture
def server(vault_dir: Path) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """A server with short limits: its port and its process."""
    with http_server(vault_dir, *LIMITS) as (url, process):
        yield int(urlsplit(url).port or 0), process


@pytest.fixture
def port(server: tuple[int, subprocess.Popen[str]]) -> int:
    return server[0]


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
    return head(method, port, accept, len(body)) + body


def head(method: str, port: int, accept: str, length: int) -> bytes:
    """A request's line and headers, promising a JSON body of `length` bytes."""
    return (
        f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: {accept}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


@pytest.mark.processes
def test_half_sent_headers_are_closed_after_the_header_timeout(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        assert read_all(sock) == b""


@pytest.mark.processes
def test_a_connection_idle_after_its_answer_is_closed(port: int) -> None:
    answer = pinged(port)
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.endswith(b'{"jsonrpc":"2.0","id":1,"result":{}}')


@pytest.mark.processes
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


@pytest.mark.processes
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


@pytest.mark.processes
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


@pytest.mark.processes
def test_bodies_that_never_come_are_closed_and_their_slots_serve_again(
    server: tuple[int, subprocess.Popen[str]],
) -> None:
    """Every slot held by a request whose headers promise a body that never comes: each is
    answered 408 and closed after the body timeout, a real request is answered after, and
    the log holds no traceback for the requests cut short."""
    port, process = server
    answered(port)  # the server has let go of the helper's probe that it was up
    with ExitStack() as stack:
        held = [stack.enter_context(connect(port)) for _ in range(CAP)]
        for sock in held:
            sock.sendall(head("POST", port, MCP_ACCEPT, 10))
        answers = [read_all(sock) for sock in held]
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers), answers
    assert b"the request's body did not come in time" in answers[0]
    assert pinged(port).endswith(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    process.terminate()
    assert "Traceback" not in process.communicate(timeout=WAIT)[1]


@pytest.mark.processes
def test_a_pipelined_request_whose_body_never_comes_is_closed(port: int) -> None:
    """A request sent behind another on the same connection, its body promised and never
    sent, starts its clock when the first is answered (no bytes come to start it)."""
    with connect(port) as sock:
        sock.sendall(request("GET", port, MCP_ACCEPT) + head("POST", port, MCP_ACCEPT, 10))
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 405")
    assert b"HTTP/1.1 408" in answer


@pytest.mark.processes
def test_a_body_trickling_below_the_minimum_rate_is_cut_off(port: int) -> None:
    """A byte every TRICKLE seconds keeps coming, but far below --min-body-rate: the server
    closes the connection long before the promised body is complete."""
    promised = int(2 * WAIT / TRICKLE)  # more than the trickle could send in WAIT seconds
    sent = 0
    with connect(port) as sock:
        sock.sendall(head("POST", port, MCP_ACCEPT, promised))
        while sent < promised and not readable(sock, TRICKLE):
            sock.sendall(b" ")
            sent += 1
        answer = read_all(sock)
    assert sent < promised
    assert answer.startswith(b"HTTP/1.1 408")


@pytest.mark.processes
def test_a_big_post_sent_in_pieces_past_the_body_timeout_is_answered(
    port: int, vault_dir: Path
) -> None:
    """A write_mem of about 1 MiB whose pieces come for longer than the body timeout, but well
    above the minimum rate, is answered and written."""
    content = "A line of a long note about payment retries.\n" * 20000
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write_mem", "arguments": {"title": "Big note", "content": content}},
    }
    body = json.dumps(call).encode()
    piece = 128 * 1024
    with connect(port) as sock:
        sock.sendall(head("POST", port, MCP_ACCEPT, len(body)) + body[:piece])
        for start in range(piece, len(body), piece):
            time.sleep(0.25)  # eight pieces: about 2 s in all, past the 1 s body timeout
            sock.sendall(body[start : start + piece])
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'"isError":false' in answer
    [note] = vault_dir.rglob("big-note.md")
    assert note.read_text(encoding="utf-8").count("payment retries") == 20000


def readable(sock: socket.socket, seconds: float) -> bool:
    """Whether the server has answered or closed the connection within `seconds`."""
    return bool(select.select([sock], [], [], seconds)[0])


def pinged(port: int) -> bytes:
    """The answer to an MCP ping on a fresh connection."""
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    with connect(port) as sock:
        sock.sendall(request("POST", port, MCP_ACCEPT, ping))
        return read_all(sock)
