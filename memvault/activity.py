"""Whether a server is answering requests, or was a moment ago: what its background work (a
first embedding of the vault) waits for before it takes the cores.

The server's request handling marks each request it answers (`Activity.request`); this module
knows nothing of MCP or HTTP. A background thread asks how long the server has been quiet
(`quiet_for`). A server's copies (`serve --processes`) each keep their own record in one shared
anonymous mapping, made when this module is imported, before the copies fork (cli/serve.py
imports it): the copy that embeds yields to the requests every copy answers.
"""

from __future__ import annotations

import math
import mmap
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# A process's record: its requests in flight, and when the count last changed (time.monotonic,
# which every process of the machine reads alike).
RECORD = struct.Struct("qd")
# Records at most: `serve --processes` runs 64 copies at most.
RECORDS = 64


class Activity:
    """The requests a server's processes answer: how many are in flight, and when the last one
    ended."""

    def __init__(self, records: int = RECORDS) -> None:
        self._shared = mmap.mmap(-1, RECORD.size * records)
        self._records = records
        self._mine = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    def own(self, number: int) -> None:
        """Keep this process's count in record `number`: a server copy's number, from 0."""
        if not 0 <= number < self._records:
            raise ValueError(f"no record {number}: there are {self._records}")
        self._mine = number

    @contextmanager
    def request(self) -> Iterator[None]:
        """A request being answered, for as long as the block runs."""
        self._count(1)
        try:
            yield
        finally:
            self._count(-1)

    def quiet_for(self) -> float:
        """Seconds since the last request of any of the server's processes ended: 0 while one
        is being answered, infinite when none ever was."""
        now = time.monotonic()
        quiet = math.inf
        for in_flight, changed in RECORD.iter_unpack(self._shared):
            if in_flight > 0:
                return 0.0
            if changed:
                quiet = min(quiet, now - changed)
        return quiet

    def _count(self, step: int) -> None:
        """One more request in flight, or one fewer, in this process's record (its own threads
        take turns: no other process writes it)."""
        with self._lock:
            self._in_flight += step
            offset = self._mine * RECORD.size
            RECORD.pack_into(self._shared, offset, self._in_flight, time.monotonic())


# The requests of this process (and of its copies, when it is a server that forks them).
REQUESTS = Activity()
