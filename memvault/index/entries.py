"""Each file's entry in the index: its rows written, replaced and dropped, and what the index
recorded of the file (size, mtime, hash) for a sync to compare with the disk.

A note's rows come from `rows.py`; the links they change are resolved by `link_resolution.py`.
The rowids a write touched are kept for the semantic side (`touched_notes`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memvault.core.ages import Seen
from memvault.core.document import parse_document
from memvault.core.memory import Memory, content_hash, memory_from
from memvault.core.records import FileInfo
from memvault.index import link_resolution
from memvault.index.connections import ConnectionPool
from memvault.index.rows import NoteRows, note_rows, section_rowids
from memvault.index.schema import DERIVED_TABLES, LINK_INDEXES, NOTE_INDEXES, TABLES, run_script

# What the index recorded of a file: size, mtime_ns, content hash and the update time it gave.
FileState = tuple[int, int, str, str | None]

# The notes a process's writes touched, kept until the semantic side asks (`touched_notes`): past
# this many it looks at every note instead, which then costs less than reading these one by one.
TOUCHED_KEPT = 2000


class Entries:
    """The files' entries: written when memvault writes a file or a sync sees one change."""

    def __init__(self, pool: ConnectionPool):
        """The entries of the index `pool` connects to."""
        self._pool = pool
        self._touched: set[int] | None = set()
        self._touched_lock = threading.Lock()

    def upsert(self, path: str, text: str, info: FileInfo) -> Memory:
        """Index one file's text (after memvault wrote it, or a sync saw it change), dated by
        what the index saw of it before (core/ages.py)."""
        digest = content_hash(text)
        doc = parse_document(text)
        with self._pool.transaction() as db:
            memory = memory_from(path, doc, info.mtime_ns, digest, _seen(self.state(db, path)))
            self._replace(db, memory, info, digest)
        return memory

    def remove(self, path: str) -> None:
        """Forget a file; links that pointed at it dangle (or find another note)."""
        with self._pool.transaction() as db:
            self.drop(db, path)

    def apply(
        self, db: sqlite3.Connection, info: FileInfo, text: str, state: FileState | None
    ) -> str:
        """Index a file the disk has changed: 'added', 'updated', or 'touched' when only its
        stat changed (same hash), which is all that is then recorded."""
        digest = content_hash(text)
        if state is not None and state[2] == digest:
            db.execute(
                "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?",
                (info.size, info.mtime_ns, info.path),
            )
            return "touched"
        doc = parse_document(text)
        memory = memory_from(info.path, doc, info.mtime_ns, digest, _seen(state))
        self._replace(db, memory, info, digest)
        return "added" if state is None else "updated"

    def drop(self, db: sqlite3.Connection, path: str) -> None:
        """Forget a file inside the caller's transaction; its rows go by foreign key."""
        row = db.execute("SELECT rowid FROM notes WHERE path = ?", (path,)).fetchone()
        if row is not None:
            link_resolution.pick_inbound(db, row[0])
            _delete(db, row[0])
            link_resolution.resolve_picked(db)
            self._touch(row[0])

    def _replace(self, db: sqlite3.Connection, memory: Memory, info: FileInfo, digest: str) -> None:
        """Write `memory`'s rows in place of the file's old ones, and resolve again the links
        the change concerns (to it, from it, to a name it takes or gives up)."""
        old = db.execute("SELECT rowid FROM notes WHERE path = ?", (memory.path,)).fetchone()
        if old is not None:
            link_resolution.pick_inbound(db, old[0])
            _delete(db, old[0])
        rowid = self.write_rows(db, note_rows(memory, info.size, info.mtime_ns, digest))
        link_resolution.pick_affected(db, memory, rowid)
        link_resolution.resolve_picked(db)
        self._touch(*([old[0]] if old else []), rowid)

    def touch(self, path: str) -> None:
        """Count the note at `path` as changed for `touched_notes`, though this process did not
        write it: another process indexed its change first (a CLI write seen by a server's
        watcher), and this one's semantic side must still look at it."""
        with self._pool.borrowed("query") as db:
            row = db.execute("SELECT rowid FROM notes WHERE path = ?", (path,)).fetchone()
        if row is not None:
            self._touch(int(row[0]))

    def _touch(self, *rowids: int) -> None:
        """Keep `rowids` for `touched_notes`, or stop keeping any past TOUCHED_KEPT."""
        with self._touched_lock:
            if self._touched is not None:
                self._touched.update(rowids)
                if len(self._touched) > TOUCHED_KEPT:
                    self._touched = None

    def touched_notes(self) -> set[int] | None:
        """The rowids of the notes this process's writes added or dropped since the last call
        (a note that changes gets a new rowid: both count; a write rolled back counts too), so
        that the semantic side looks at those, not at every note, after a write; None when
        more than TOUCHED_KEPT were (look at every note), as in a process nobody asks."""
        with self._touched_lock:
            touched, self._touched = self._touched, set()
        return touched

    @contextmanager
    def rebuilding(self) -> Iterator[sqlite3.Connection]:
        """A transaction that empties the derived tables, lets the caller fill them with
        `write_rows`, then indexes, resolves and merges once at the end. Foreign keys are off
        meanwhile: the tables are made whole in one go, not row by row."""
        with self._pool.transaction(foreign_keys=False) as db:
            for table in DERIVED_TABLES:
                db.execute(f"DROP TABLE {table}")
            run_script(db, TABLES)
            yield db
            # One segment: each term of a query is then one b-tree seek, not one per segment.
            db.execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')")
            run_script(db, NOTE_INDEXES)
            link_resolution.resolve_all(db)
            run_script(db, LINK_INDEXES)
        self._pool.fresh = False

    def write_rows(self, db: sqlite3.Connection, rows: NoteRows) -> int:
        """Insert one note's rows (links unresolved); its new rowid."""
        cursor = db.execute(
            "INSERT INTO notes (path, path_key, stem_key, title_key, folder, id, title, tags,"
            " created_at, updated_at, last_reviewed, scope, expires_at, size, mtime_ns, hash,"
            " problem, created_by, updated_by, superseded_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows.note,
        )
        rowid = int(cursor.lastrowid or 0)
        db.executemany(
            "INSERT INTO aliases (note, alias, alias_key) VALUES (?, ?, ?)",
            [(rowid, *alias) for alias in rows.aliases],
        )
        db.executemany(
            "INSERT INTO tags (note, tag) VALUES (?, ?)", [(rowid, tag) for tag in rows.tags]
        )
        db.executemany(
            "INSERT INTO properties (note, key, value) VALUES (?, ?, ?)",
            [(rowid, *pair) for pair in rows.properties],
        )
        db.executemany(
            "INSERT INTO links (source, folder, raw, key, name, alt, has_path, attachment,"
            " related) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(rowid, *link) for link in rows.links],
        )
        first, _ = section_rowids(rowid)
        db.executemany(
            "INSERT INTO notes_fts (rowid, title, aliases, tags, body, facets)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(first + number, *section) for number, section in enumerate(rows.fts)],
        )
        return rowid

    def move_usage(self, db: sqlite3.Connection, old_id: str, new_path: str) -> None:
        """Give the kept state of a file that went to the note now at `new_path` (a file moved
        outside memvault whose id changed with its path)."""
        db.execute(
            "UPDATE OR IGNORE usage SET id = (SELECT id FROM notes WHERE path = ?) WHERE id = ?",
            (new_path, old_id),
        )

    @staticmethod
    def state(db: sqlite3.Connection, path: str) -> FileState | None:
        """What the index recorded of a file (FileState), or None if it is not indexed."""
        row = db.execute(
            "SELECT size, mtime_ns, hash, updated_at FROM notes WHERE path = ?", (path,)
        ).fetchone()
        return (int(row[0]), int(row[1]), str(row[2]), row[3]) if row else None

    def file_state(self, path: str) -> FileState | None:
        """What the index recorded of a file (FileState), or None if it is not indexed."""
        with self._pool.borrowed("query") as db:
            return self.state(db, path)

    def indexed_files(self) -> set[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every indexed file, as plain tuples (a sync compares
        them with a walk's by set operations)."""
        with self._pool.borrowed() as db:
            cursor = db.cursor()
            cursor.row_factory = None
            return set(cursor.execute("SELECT path, size, mtime_ns FROM notes"))

    def gone_state(self, db: sqlite3.Connection, path: str) -> tuple[str, str] | None:
        """(hash, id) of an indexed file, to tell a move from a deletion."""
        row = db.execute("SELECT hash, id FROM notes WHERE path = ?", (path,)).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def rowid_high(self) -> int:
        """The highest rowid: about the number of notes, read in one seek (a count scans)."""
        return int(self._pool.query("SELECT max(rowid) FROM notes")[0][0] or 0)

    def seen_files(self) -> dict[str, Seen]:
        """The content hash and `updated_at` of every indexed file by path, for a rebuild to
        date each file as the index saw it (core/ages.py)."""
        rows = self._pool.query("SELECT path, hash, updated_at FROM notes")
        return {r[0]: (r[1], r[2]) for r in rows}

    def seen(self, path: str) -> Seen | None:
        """The content hash and `updated_at` the index recorded for a file, or None: a read
        dates the file by them as the index does (core/ages.py)."""
        return _seen(self.file_state(path))


def _seen(state: FileState | None) -> Seen | None:
    """The content hash and update time of a file's recorded state."""
    return None if state is None else (state[2], state[3])


def _delete(db: sqlite3.Connection, rowid: int) -> None:
    """Delete a note: aliases, tags and its links go by foreign key (links to it become
    NULL); the FTS table, virtual, has none."""
    db.execute("DELETE FROM notes WHERE rowid = ?", (rowid,))
    db.execute("DELETE FROM notes_fts WHERE rowid BETWEEN ? AND ?", section_rowids(rowid))
