"""uvicorn's h11 protocol within memvault's HTTP limits (connections.py): a connection that has
not sent a request's headers, or its body, in time is closed, and one past the cap is refused
with a 503 before anything is read. Imported only to serve HTTP: stdio's start does not pay for
h11.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from uvicorn.protocols.http.h11_impl import H11Protocol

from memvault.server.http.connections import (
    TOO_SLOW,
    Clock,
    EndsWhenGone,
    HttpLimits,
    short_answer,
)
from memvault.words import count


def limited_protocol(limits: HttpLimits) -> type[LimitedProtocol]:
    """The protocol class uvicorn makes a connection of, within `limits`."""
    return type("Limited", (LimitedProtocol,), {"limits": limits})


class LimitedProtocol(H11Protocol):
    """Closes a connection that has not sent a request's headers, or its body, in time;
    refuses one past the cap with a 503 before reading anything."""

    limits: HttpLimits
    clock: Clock | None = None
    timer: asyncio.TimerHandle | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = EndsWhenGone(self.app)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.connections:
            open_now = count(self.limits.connections, "connection")
            verb = "is" if self.limits.connections == 1 else "are"
            text = f"memvault: {open_now} {verb} open; try again later\n"
            transport.write(short_answer("503 Service Unavailable", text, "Retry-After: 1"))
            transport.close()
            return
        self._follow(0)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow(len(data))

    def on_response_complete(self) -> None:
        # A pipelined request may start here, its body still to come, with no bytes to
        # come through data_received: its clock starts now.
        super().on_response_complete()
        self._follow(0)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _waiting_for(self) -> Literal["headers", "body"] | None:
        """What the connection owes now: the next request's headers, the body of the one
        under way, or nothing while the app answers."""
        if self.transport.is_closing():
            return None
        if self.cycle is None or self.cycle.response_complete:
            return "headers"
        return "body" if self.cycle.more_body else None

    def _follow(self, received: int) -> None:
        """Keep the clock the connection's state calls for, counting `received` bytes: the
        headers' clock runs from the end of the last answer (bytes do not extend it), the
        body's from the end of the headers (each byte extends it)."""
        waiting_for = self._waiting_for()
        if waiting_for is None:
            self._stop()
        elif self.clock is None or self.clock.waiting_for != waiting_for:
            self._start(waiting_for)
        else:
            self.clock.received += received

    def _start(self, waiting_for: Literal["headers", "body"]) -> None:
        """Start the clock for what the connection owes now (a body's counts the bytes of
        it already here, which the app has not taken yet)."""
        self._stop()
        now = self.loop.time()
        if waiting_for == "headers":
            self.clock = Clock(waiting_for, now, self.limits.header_seconds, 0.0)
        else:
            per_byte = 1 / self.limits.body_rate
            came = len(self.cycle.body)
            self.clock = Clock(waiting_for, now, self.limits.body_seconds, per_byte, came)
        self.timer = self.loop.call_at(self.clock.due(), self._check)

    def _stop(self) -> None:
        """Stop the clock: the connection owes nothing now, or is gone."""
        if self.timer is not None:
            self.timer.cancel()
        self.clock = self.timer = None

    def _check(self) -> None:
        """The clock's first due time came: wait on if bytes have moved it since, else
        close the connection (with a 408 if a body was late and nothing answered yet)."""
        clock, self.timer = self.clock, None
        if clock is None:
            return
        if clock.waiting_for == "body" and self.flow.read_paused:
            # The server stopped reading (the app has not taken the body that came): the
            # client is not the slow one, so its clock starts again.
            self._start("body")
            return
        if self.loop.time() < clock.due():
            self.timer = self.loop.call_at(clock.due(), self._check)
            return
        self.clock = None
        if clock.waiting_for == "body" and not self.cycle.response_started:
            self.transport.write(short_answer("408 Request Timeout", TOO_SLOW))
        self.transport.close()
