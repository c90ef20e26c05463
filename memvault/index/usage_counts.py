"""Uses of memories counted in memory until a writer saves them to the index's `usage` table.

A read (search, read, briefing) only adds to the tally, so it writes nothing and never waits
for a write lock; `UsageCounts.flush` takes the tally in one batch and gives it back if the
write fails (disk full, read-only media), so no use is lost while the process lives.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable

from memvault.core import clock
from memvault.core.records import Usage
from memvault.index.connections import ConnectionPool

log = logging.getLogger(__name__)

# (uses, last use as ISO 8601) of one memory
Uses = tuple[int, str]
# Uses are saved when this many memories have unsaved ones, or the oldest is this old.
FLUSH_MEMORIES = 500
FLUSH_SECONDS = 30.0


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


class UsageCounts:
    """The uses of memories (kept state): counted in memory at a read, saved in batches on a
    thread of their own, exported and imported."""

    def __init__(self, pool: ConnectionPool, tally: Tally):
        """The uses saved in the index `pool` connects to, and those `tally` holds unsaved."""
        self._pool = pool
        self._tally = tally
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._flusher: threading.Thread | None = None
        self._flush_failing = False

    def record(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (read, or returned by search or context): kept state,
        counted in memory and saved in batches on a thread of its own, so a read never
        writes."""
        self._tally.add(ids, clock.now_iso())
        if not self._tally.due(FLUSH_MEMORIES, FLUSH_SECONDS):
            return
        with self._lock:
            if self._flusher is not None and self._flusher.is_alive():
                return
            self._flusher = threading.Thread(target=self.flush, name="memvault-usage", daemon=True)
            self._flusher.start()

    def flush(self) -> bool:
        """Save the uses counted in memory; False when that failed (disk full, read-only
        media), with one line on stderr the first time: the uses then stay counted in memory
        and are tried again with the next batch."""
        with self._flush_lock:
            taken = self._tally.take()
            if not taken:
                return True
            try:
                with self._pool.transaction() as db:
                    db.executemany(
                        "INSERT INTO usage (id, access_count, last_access) VALUES (?, ?, ?)"
                        " ON CONFLICT(id) DO UPDATE SET access_count = access_count +"
                        " excluded.access_count, last_access = max(coalesce(last_access, ''),"
                        " excluded.last_access)",
                        [(memory_id, count, last) for memory_id, (count, last) in taken.items()],
                    )
            except (sqlite3.Error, OSError) as exc:
                self._tally.give_back(taken)
                if not self._flush_failing:
                    log.warning("usage counts kept in memory: cannot save them (%s)", exc)
                self._flush_failing = True
                return False
            self._flush_failing = False
            return True

    def by_id(self) -> dict[str, Usage]:
        """Kept state for export, by memory id (the uses not saved yet included)."""
        rows = self._pool.query("SELECT id, access_count, last_access FROM usage")
        saved: dict[str, Uses] = {r[0]: (int(r[1]), r[2] or "") for r in rows}
        for memory_id, uses in self._tally.snapshot().items():
            saved[memory_id] = merged(saved.get(memory_id), uses)
        return {i: Usage(count, last or None) for i, (count, last) in saved.items()}

    def restore(self, memory_id: str, count: int, last_access: str | None) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        with self._pool.transaction() as db:
            db.execute(
                "INSERT INTO usage (id, access_count, last_access) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET access_count = max(access_count,"
                " excluded.access_count), last_access = max(coalesce(last_access, ''),"
                " coalesce(excluded.last_access, ''))",
                (memory_id, count, last_access),
            )
