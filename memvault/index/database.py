"""The SQLite index that mirrors the vault: its parts, each owning one job, on one pool of
connections (the package's docstring says what each holds).

Notes, links, tags, aliases and the FTS table are derived data (`index/sync.py` fills them from
the files; `index/schema.py` holds their tables); `usage` and `appends` are kept state.
"""

from __future__ import annotations

from pathlib import Path

from memvault.config import QUERY_TIMEOUT
from memvault.index.appends import Appends
from memvault.index.bodies import Bodies
from memvault.index.connections import ConnectionPool
from memvault.index.entries import Entries
from memvault.index.names import Names
from memvault.index.reports import Reports
from memvault.index.schema import writable_index
from memvault.index.searching import Search
from memvault.index.usage_counts import Tally, UsageCounts


class Index:
    """One SQLite file with the notes, their links and the FTS table, as the parts that read
    and write it; safe across threads."""

    def __init__(
        self, path: Path, query_timeout: float = QUERY_TIMEOUT, fallback: Path | None = None
    ):
        """The index at `path`, or at `fallback` when `path` cannot be written (index/schema.py)."""
        self.pool = ConnectionPool(writable_index(Path(path), fallback), query_timeout)
        unsaved = Tally()
        self.entries = Entries(self.pool)
        self.names = Names(self.pool, unsaved)
        self.search = Search(self.pool, unsaved, self.names)
        self.bodies = Bodies(self.pool, self.names)
        self.usage = UsageCounts(self.pool, unsaved)
        self.appends = Appends(self.pool)
        self.reports = Reports(self.pool, unsaved)

    def close(self) -> None:
        """Save the uses counted so far and close the connections (one still lent out is
        closed when it comes back)."""
        self.usage.flush()
        self.pool.close()
