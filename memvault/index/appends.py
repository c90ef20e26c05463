"""The appends memvault acknowledged (kept state), so that `check` can report one an editor's
stale save later lost."""

from __future__ import annotations

import datetime as dt

from memvault.core import clock
from memvault.index.connections import ConnectionPool

# The appends memvault acknowledged that `check` looks back on (an editor's stale save loses
# them): those of the last APPEND_DAYS, at most APPENDS_KEPT, each by its first APPEND_CHARS
# characters, which a copy saved from before it lacks as surely as the rest.
APPEND_DAYS = 30
APPENDS_KEPT = 2000
APPEND_CHARS = 2000


class Appends:
    """The index's `appends` table: what memvault appended, and when, by memory id."""

    def __init__(self, pool: ConnectionPool):
        """The appends recorded in the index `pool` connects to."""
        self._pool = pool

    def remember(self, memory_id: str, text: str) -> None:
        """Record that memvault appended `text` to a memory now (its first APPEND_CHARS
        characters), and forget the appends older than APPEND_DAYS or beyond APPENDS_KEPT."""
        kept = text.strip()[:APPEND_CHARS]
        if not kept:
            return
        now = clock.now()
        with self._pool.transaction() as db:
            db.execute(
                "INSERT INTO appends (note_id, at, text) VALUES (?, ?, ?)",
                (memory_id, clock.iso(now), kept),
            )
            db.execute(
                "DELETE FROM appends WHERE at < ? OR rowid <= (SELECT max(rowid) FROM appends) - ?",
                (clock.iso(now - dt.timedelta(days=APPEND_DAYS)), APPENDS_KEPT),
            )

    def since(self, since: str) -> list[tuple[int, str, str, str]]:
        """(record, path, when, text) of each append remembered since `since` to a memory the
        index holds (one row per file, when a copied file shares the id), oldest first."""
        rows = self._pool.query(
            "SELECT a.rowid, n.path, a.at, a.text FROM appends a JOIN notes n ON n.id = a.note_id"
            " WHERE a.at >= ? ORDER BY a.rowid, n.path",
            (since,),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def forget_taken_out(self, memory_id: str, before: str, after: str) -> None:
        """Forget the appends to a memory that memvault's own change of its body from `before`
        to `after` took out (new content, a find/replace, a link that followed a rename): only
        an append lost in a save memvault did not make is left for `check` to report."""
        if before == after:
            return
        rows = self._pool.query("SELECT rowid, text FROM appends WHERE note_id = ?", (memory_id,))
        gone = [(r[0],) for r in rows if r[1] in before and r[1] not in after]
        if gone:
            with self._pool.transaction() as db:
                db.executemany("DELETE FROM appends WHERE rowid = ?", gone)
