"""Uses of memories counted in memory until a writer saves them to the index's `usage` table.

A read (search, read, briefing) only adds to the tally, so it writes nothing and never waits
for a write lock; `Index.flush_usage` takes the tally in one batch and gives it back if the
write fails (disk full, read-only media), so no use is lost while the process lives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

# (uses, last use as ISO 8601) of one memory
Uses = tuple[int, str]


class Tally:
    """Uses not saved yet, by memory id; safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uses: dict[str, Uses] = {}
        self._since: float | None = None

    def add(self, ids: Iterable[str], when: str) -> None:
        """Count one use of each of `ids` (each once however often it is named) at `when`."""
        with self._lock:
            for memory_id in set(ids):
                count, _ = self._uses.get(memory_id, (0, when))
                self._uses[memory_id] = (count + 1, when)
            if self._uses and self._since is None:
                self._since = time.monotonic()

    def due(self, most: int, seconds: float) -> bool:
        """Whether the tally should be saved: `most` memories or more, or its oldest use
        older than `seconds`."""
        with self._lock:
            if self._since is None:
                return False
            return len(self._uses) >= most or time.monotonic() - self._since >= seconds

    def take(self) -> dict[str, Uses]:
        """Everything counted so far, leaving the tally empty (to be saved)."""
        with self._lock:
            taken, self._uses, self._since = self._uses, {}, None
            return taken

    def give_back(self, taken: dict[str, Uses]) -> None:
        """Put back what `take` returned and could not be saved, with what came meanwhile."""
        with self._lock:
            for memory_id, uses in taken.items():
                self._uses[memory_id] = merged(self._uses.get(memory_id), uses)
            if self._uses and self._since is None:
                self._since = time.monotonic()

    def snapshot(self) -> dict[str, Uses]:
        """A copy of what is counted and not saved yet, for reads to add to the saved counts."""
        with self._lock:
            return dict(self._uses)


def merged(saved: Uses | None, more: Uses) -> Uses:
    """Two counts of one memory as one: the uses added, the later last use."""
    if saved is None:
        return more
    return saved[0] + more[0], max(saved[1], more[1])
