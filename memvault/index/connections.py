"""The index's connections: a pool that lends each thread one, and a read's time limit.

Each thread borrows a connection of its own for a read or a transaction, so reads run side by
side (SQLite's WAL lets readers go on while one connection writes); write transactions take
turns on a lock in this process, and on SQLite's in others. A read is stopped after
`query_timeout` seconds by a progress handler.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.config import QUERY_TIMEOUT
from memvault.errors import TooSlow
from memvault.index.schema import connect, open_index

# SQLite calls the progress handler every this many virtual machine steps (FTS5's reads of its
# own tables count; its work in C does not). Each call takes the GIL: a smaller number would slow
# a long query down under load, a larger one stop it later.
PROGRESS_STEPS = 10_000


@dataclass
class _Connection:
    """One pooled connection, and the deadline of the read it serves (none for a write)."""

    db: sqlite3.Connection
    deadline: float = math.inf

    def late(self) -> int:
        """The progress handler: non-zero stops the statement running (SQLITE_INTERRUPT)."""
        return int(time.monotonic() > self.deadline)


class ConnectionPool:
    """The connections to one index file, lent one per thread; safe across threads."""

    def __init__(self, path: Path, query_timeout: float = QUERY_TIMEOUT):
        """Open (and make or repair) the index at `path` (index/schema.py); `fresh` says
        that it was just made, with nothing indexed yet."""
        self.path = path
        self.query_timeout = query_timeout
        self._held = threading.local()
        self._pool_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._closed = False
        db, self.fresh = open_index(self.path)
        self._idle = [self._pooled(db)]

    def close(self) -> None:
        """Close the connections (one still lent out is closed when it comes back)."""
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.db.close()

    @staticmethod
    def _pooled(db: sqlite3.Connection) -> _Connection:
        """`db` with the progress handler that enforces its reads' deadlines."""
        connection = _Connection(db)
        db.set_progress_handler(connection.late, PROGRESS_STEPS)
        return connection

    @contextmanager
    def borrowed(self, what: str = "") -> Iterator[sqlite3.Connection]:
        """This thread's connection: the one it holds already (inside a transaction or a
        read of several queries), else one from the pool. A read (`what` names it for the
        error) is stopped after `query_timeout` seconds with TooSlow."""
        held: _Connection | None = getattr(self._held, "connection", None)
        if held is not None:
            yield held.db
            return
        with self._pool_lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            db = connect(self.path)
            db.execute("PRAGMA foreign_keys = ON")
            connection = self._pooled(db)
        connection.deadline = time.monotonic() + self.query_timeout if what else math.inf
        self._held.connection = connection
        try:
            yield connection.db
        except sqlite3.OperationalError as exc:
            if what and exc.sqlite_errorname == "SQLITE_INTERRUPT":
                raise TooSlow(
                    f"the {what} took longer than {self.query_timeout:g} s and was stopped; "
                    "narrow the query"
                ) from exc
            raise
        finally:
            self._held.connection = None
            connection.deadline = math.inf
            with self._pool_lock:
                closed = self._closed
                if not closed:
                    self._idle.append(connection)
            if closed:
                connection.db.close()

    @contextmanager
    def transaction(self, foreign_keys: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (the indexer's unit of work); writers in this process take
        turns here rather than in SQLite's busy loop. Without `foreign_keys` (a rebuild, which
        makes the tables whole in one go), they are off until it ends."""
        with self._write_lock, self.borrowed() as db:
            if not foreign_keys:
                db.execute("PRAGMA foreign_keys = OFF")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            finally:
                if not foreign_keys:
                    db.execute("PRAGMA foreign_keys = ON")

    def query(self, sql: str, params: Iterable[object] = ()) -> list[sqlite3.Row]:
        """The rows of one read statement, on a pooled connection, within the time limit."""
        with self.borrowed("query") as db:
            return db.execute(sql, tuple(params)).fetchall()

    def column(self, sql: str, params: Iterable[object] = ()) -> list[Any]:
        """The first value of every row of one read statement, within the time limit: plain
        tuples, as a Row each cost more than the read (13 ms against 8 for 22k rowids)."""
        with self.borrowed("query") as db, closing(db.execute(sql, tuple(params))) as cursor:
            cursor.row_factory = None
            return [row[0] for row in cursor.fetchall()]

    def stream(
        self, sql: str, params: Iterable[object] = (), size: int = 4096
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of one long read statement in batches of `size` plain tuples, with no time
        limit: a bulk read memvault makes of its own (every vector, at a server's start),
        never the whole result in memory at once."""
        with self.borrowed() as db, closing(db.execute(sql, tuple(params))) as cursor:
            cursor.row_factory = None
            while batch := cursor.fetchmany(size):
                yield batch
