"""The SQLite index that mirrors the vault: its reads and writes, on a pool of connections.

Notes, links, tags, aliases and the FTS table are derived data (`index/sync.py` fills them from
the files; `index/schema.py` holds their tables); `usage` is kept state, counted in memory by
reads (`index/usage_counts.py`) and saved in batches by writers. Links are resolved by
`link_resolution.py`, searches run the SQL `search_sql.py` builds.

Each thread borrows a connection of its own for a read or a transaction, so reads run side by
side (SQLite's WAL lets readers go on while one connection writes); write transactions take
turns on a lock in this process, and on SQLite's in others. A read is stopped after
`query_timeout` seconds by a progress handler.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import math
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.config import QUERY_TIMEOUT
from memvault.core import clock
from memvault.core.document import parse_document
from memvault.core.markdown import Link
from memvault.core.memory import VERSION_LENGTH, Memory, content_hash, memory_from
from memvault.core.records import (
    FileInfo,
    Filter,
    LinkRow,
    NoteRow,
    SearchHit,
    SearchPage,
    Stats,
    Usage,
)
from memvault.errors import TooSlow
from memvault.index import link_resolution
from memvault.index.rows import SECTION_CHARS, NoteRows, link_key, note_rows, section_rowids
from memvault.index.schema import (
    DERIVED_TABLES,
    LINK_INDEXES,
    NOTE_INDEXES,
    TABLES,
    connect,
    open_index,
    run_script,
    writable_index,
)
from memvault.index.search_sql import (
    ARCHIVED,
    NOTE_OF_ROW,
    PAGE_EMPTIED,
    PAGE_ROW,
    PAGE_TABLE,
    SHOWN_EMPTIED,
    SHOWN_ROWS,
    SHOWN_TABLES,
    SORTS,
    SearchPlan,
    Statement,
    admitted_sql,
    count_sql,
    filter_sql,
    holding_sql,
    left_out_sql,
    matches_sql,
    page_held_sql,
    search_plan,
    search_sql,
    sections_sql,
    shown_rows_sql,
    shown_snippets_sql,
    snippet_text,
    word_groups,
)
from memvault.index.usage_counts import Tally, Uses, merged
from memvault.search.filters import scopes_term
from memvault.search.query import display_text, fts_text
from memvault.search.relevance import relevance

log = logging.getLogger(__name__)

FileState = tuple[int, int, str]

# SQLite calls the progress handler every this many virtual machine steps (FTS5's reads of its
# own tables count; its work in C does not). Each call takes the GIL: a smaller number would slow
# a long query down under load, a larger one stop it later.
PROGRESS_STEPS = 10_000
# Uses are saved when this many memories have unsaved ones, or the oldest is this old.
FLUSH_MEMORIES = 500
FLUSH_SECONDS = 30.0
# The appends memvault acknowledged that `check` looks back on (an editor's stale save loses
# them): those of the last APPEND_DAYS, at most APPENDS_KEPT, each by its first APPEND_CHARS
# characters, which a copy saved from before it lacks as surely as the rest.
APPEND_DAYS = 30
APPENDS_KEPT = 2000
APPEND_CHARS = 2000
# A hit's relevance reads this many characters of its note at most (a few sections).
RELEVANCE_CHARS = 200_000
# A text a note holds in more places than this (a line repeated through a log) is shown around
# its first few only.
PASSAGES = 3
# The notes a process's writes touched, kept until the semantic side asks (`touched_notes`): past
# this many it looks at every note instead, which then costs less than reading these one by one.
TOUCHED_KEPT = 2000


@dataclass
class Match:
    """A note a query ranked (lower is better: bm25, or a fused or cosine score negated), with
    the snippet to show for it and, when semantic search found it, its cosine similarity.
    Full-text's matches name the section (FTS row) that ranked them, whose snippet they show
    once they are on the page (`Index.with_snippets`)."""

    rowid: int
    rank: float
    snippet: str
    similarity: float = 0.0
    section: int | None = None


@dataclass
class _Connection:
    """One pooled connection, and the deadline of the read it serves (none for a write)."""

    db: sqlite3.Connection
    deadline: float = math.inf

    def late(self) -> int:
        """The progress handler: non-zero stops the statement running (SQLITE_INTERRUPT)."""
        return int(time.monotonic() > self.deadline)


# How stats name a note's category and scope: '(none)' and '(global)' when it has none.
_CATEGORY_KEY = "CASE folder WHEN '' THEN '(none)' ELSE folder END"
_SCOPE_KEY = "coalesce(scope, '(global)')"
_BY_TITLE = "SELECT path FROM notes WHERE title_key = ? ORDER BY length(path), path"


class Index:
    """One SQLite file with the notes, their links and the FTS table; safe across threads."""

    def __init__(
        self, path: Path, query_timeout: float = QUERY_TIMEOUT, fallback: Path | None = None
    ):
        """The index at `path`, or at `fallback` when `path` cannot be written (index/schema.py)."""
        self.path = writable_index(Path(path), fallback)
        self.query_timeout = query_timeout
        self.uses = Tally()
        self._held = threading.local()
        self._scratch = threading.local()
        self._pool_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._flush_lock = threading.Lock()
        self._flusher: threading.Thread | None = None
        self._flush_failing = False
        self._closed = False
        self._touched: set[int] | None = set()
        self._touched_lock = threading.Lock()
        db, self.fresh = open_index(self.path)
        self._idle = [self._pooled(db)]

    def close(self) -> None:
        """Save the uses counted so far and close the connections (one still lent out is
        closed when it comes back)."""
        self.flush_usage()
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.db.close()

    @staticmethod
    def _pooled(db: sqlite3.Connection) -> _Connection:
        connection = _Connection(db)
        db.set_progress_handler(connection.late, PROGRESS_STEPS)
        return connection

    @contextmanager
    def _borrowed(self, what: str = "") -> Iterator[sqlite3.Connection]:
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
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (the indexer's unit of work); writers in this process take
        turns here rather than in SQLite's busy loop."""
        with self._write_lock, self._borrowed() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @contextmanager
    def rebuilding(self) -> Iterator[sqlite3.Connection]:
        """A transaction that empties the derived tables, lets the caller fill them with
        `write_rows`, then indexes, resolves and merges once at the end. Foreign keys are off
        meanwhile: the tables are made whole in one go, not row by row."""
        with self._write_lock, self._borrowed() as connection:
            connection.execute("PRAGMA foreign_keys = OFF")
            try:
                with self.transaction() as db:
                    for table in DERIVED_TABLES:
                        db.execute(f"DROP TABLE {table}")
                    run_script(db, TABLES)
                    yield db
                    # One segment: each term of a query is then one b-tree seek, not one per
                    # segment.
                    db.execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')")
                    run_script(db, NOTE_INDEXES)
                    link_resolution.resolve_all(db)
                    run_script(db, LINK_INDEXES)
            finally:
                connection.execute("PRAGMA foreign_keys = ON")
        self.fresh = False

    def query(self, sql: str, params: Iterable[object] = ()) -> list[sqlite3.Row]:
        """The rows of one read statement, on a pooled connection, within the time limit."""
        with self._borrowed("query") as db:
            return db.execute(sql, tuple(params)).fetchall()

    def column(self, sql: str, params: Iterable[object] = ()) -> list[Any]:
        """The first value of every row of one read statement, within the time limit: plain
        tuples, as a Row each cost more than the read (13 ms against 8 for 22k rowids)."""
        with self._borrowed("query") as db, closing(db.execute(sql, tuple(params))) as cursor:
            cursor.row_factory = None
            return [row[0] for row in cursor.fetchall()]

    def stream(
        self, sql: str, params: Iterable[object] = (), size: int = 4096
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of one long read statement in batches of `size` plain tuples, with no time
        limit: a bulk read memvault makes of its own (every vector, at a server's start),
        never the whole result in memory at once."""
        with self._borrowed() as db, closing(db.execute(sql, tuple(params))) as cursor:
            cursor.row_factory = None
            while batch := cursor.fetchmany(size):
                yield batch

    # -- writing ---------------------------------------------------------------------------

    def upsert(self, path: str, text: str, info: FileInfo) -> Memory:
        """Index one file's text (after memvault wrote it, or a sync saw it change)."""
        digest = content_hash(text)
        memory = memory_from(path, parse_document(text), info.mtime_ns, digest)
        with self.transaction() as db:
            self._replace(db, memory, info, digest)
        return memory

    def remove(self, path: str) -> None:
        """Forget a file; links that pointed at it dangle (or find another note)."""
        with self.transaction() as db:
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
        memory = memory_from(info.path, parse_document(text), info.mtime_ns, digest)
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
        old = db.execute("SELECT rowid FROM notes WHERE path = ?", (memory.path,)).fetchone()
        if old is not None:
            link_resolution.pick_inbound(db, old[0])
            _delete(db, old[0])
        rowid = self.write_rows(db, note_rows(memory, info.size, info.mtime_ns, digest))
        link_resolution.pick_affected(db, memory, rowid)
        link_resolution.resolve_picked(db)
        self._touch(*([old[0]] if old else []), rowid)

    def _touch(self, *rowids: int) -> None:
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
        """(size, mtime_ns, hash) recorded for a file, or None if it is not indexed."""
        row = db.execute(
            "SELECT size, mtime_ns, hash FROM notes WHERE path = ?", (path,)
        ).fetchone()
        return (int(row[0]), int(row[1]), str(row[2])) if row else None

    def indexed_files(self) -> set[tuple[str, int, int]]:
        """(path, size, mtime_ns) of every indexed file, as plain tuples (a sync compares
        them with a walk's by set operations)."""
        with self._borrowed() as db:
            cursor = db.cursor()
            cursor.row_factory = None
            return set(cursor.execute("SELECT path, size, mtime_ns FROM notes"))

    def gone_state(self, db: sqlite3.Connection, path: str) -> tuple[str, str] | None:
        """(hash, id) of an indexed file, to tell a move from a deletion."""
        row = db.execute("SELECT hash, id FROM notes WHERE path = ?", (path,)).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    # -- reading ---------------------------------------------------------------------------

    def link_counts(self) -> tuple[int, int, int]:
        """(links between notes, of which unresolved, links to attachments)."""
        row = self.query(
            "SELECT count(*) FILTER (WHERE NOT attachment),"
            " count(*) FILTER (WHERE NOT attachment AND target IS NULL),"
            " count(*) FILTER (WHERE attachment) FROM links"
        )[0]
        return int(row[0]), int(row[1]), int(row[2])

    def rowid_high(self) -> int:
        """The highest rowid: about the number of notes, read in one seek (a count scans)."""
        return int(self.query("SELECT max(rowid) FROM notes")[0][0] or 0)

    def file_state(self, path: str) -> tuple[int, int, str] | None:
        """(size, mtime_ns, hash) recorded for a file, or None if it is not indexed."""
        with self._borrowed("query") as db:
            return self.state(db, path)

    def resolve(self, identifier: str) -> list[str]:
        """Paths of the memories an identifier names exactly, by the first rule that matches:
        id, relative path, file stem, title, alias (all but the id case-insensitive)."""
        ident = identifier.strip()
        key = link_key(ident)
        for sql, value in (
            ("SELECT path FROM notes WHERE id = ? ORDER BY path", ident),
            ("SELECT path FROM notes WHERE path_key = ? ORDER BY path", key),
            ("SELECT path FROM notes WHERE stem_key = ? ORDER BY length(path), path", key),
            (_BY_TITLE, ident.lower()),
            (
                "SELECT DISTINCT n.path FROM aliases a JOIN notes n ON n.rowid = a.note"
                " WHERE a.alias_key = ? ORDER BY n.path",
                ident.lower(),
            ),
        ):
            rows = self.query(sql, (value,))
            if rows:
                return [r[0] for r in rows]
        return []

    def titled(self, title: str) -> list[str]:
        """Paths of every memory with this title (case ignored), in any scope: what `resolve`
        gives only when no file stem or path is named so."""
        return [r[0] for r in self.query(_BY_TITLE, (title.strip().lower(),))]

    def resolve_link(self, source: str, link: Link) -> str | None:
        """The path a link in `source` resolves to, by the same rules as the bulk resolution."""
        with self.transaction() as db:
            rowid = link_resolution.resolve_one(db, source, link)
            found = db.execute("SELECT path FROM notes WHERE rowid = ?", (rowid,)).fetchone()
        return found[0] if found else None

    def note(self, path: str) -> NoteRow | None:
        rows = self.query(
            f"SELECT {_NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id WHERE path = ?",
            (path,),
        )
        return _note_row(rows[0], self.uses.snapshot()) if rows else None

    def update_times(self) -> dict[tuple[str, str], str]:
        """The `updated_at` of every indexed file by (path, content hash), for a rebuild to
        keep the times of files whose content it has seen."""
        rows = self.query("SELECT path, hash, updated_at FROM notes WHERE updated_at IS NOT NULL")
        return {(r[0], r[1]): r[2] for r in rows}

    def known_update(self, path: str, version: str) -> str | None:
        """The `updated_at` the index recorded for a file when it last saw this content (its
        `version`), or None: a file whose mtime alone moved (a copy) keeps its time."""
        rows = self.query(
            "SELECT updated_at FROM notes WHERE path = ?"
            f" AND substr(hash, 1, {VERSION_LENGTH}) = ?",
            (path, version),
        )
        return rows[0][0] if rows else None

    def holding(self, keys: Iterable[str], value: str) -> list[tuple[str, str]]:
        """(path, key) of each note whose property among `keys` holds `value` (case ignored)."""
        wanted = list(keys)
        marks = ", ".join("?" for _ in wanted)
        rows = self.query(
            "SELECT DISTINCT n.path, p.key FROM properties p JOIN notes n ON n.rowid = p.note"
            f" WHERE p.key IN ({marks}) AND p.value = ? ORDER BY n.path, p.key",
            [*wanted, value],
        )
        return [(r[0], r[1]) for r in rows]

    def rowid(self, path: str) -> int | None:
        """The note's row in the index (its vectors' key), None when it is not indexed."""
        rows = self.query("SELECT rowid FROM notes WHERE path = ?", (path,))
        return int(rows[0][0]) if rows else None

    def has_id(self, memory_id: str) -> bool:
        return bool(self.query("SELECT 1 FROM notes WHERE id = ? LIMIT 1", (memory_id,)))

    def stem_taken(self, stem: str) -> bool:
        return bool(self.query("SELECT 1 FROM notes WHERE stem_key = ?", (stem.lower(),)))

    def stem_paths(self, stem: str) -> list[str]:
        """The paths of the notes whose file name is `stem` (ignoring case)."""
        sql = "SELECT path FROM notes WHERE stem_key = ? ORDER BY path"
        return [row[0] for row in self.query(sql, (stem.lower(),))]

    def names(
        self, where: Filter = Filter(archived=None, include_superseded=True)
    ) -> list[tuple[str, str]]:
        """(path, name) for every title, file name and alias, for fuzzy recall."""
        sql_where, params = filter_sql(where, clock.now_iso())
        rows = self.query(
            f"SELECT path, title FROM notes n WHERE 1 {sql_where}"
            f" UNION ALL SELECT path, stem_key FROM notes n WHERE 1 {sql_where}"
            " UNION ALL SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.rowid = a.note"
            f" WHERE 1 {sql_where}",
            params * 3,
        )
        return [(r[0], r[1]) for r in rows]

    def with_all_words(
        self,
        words: list[str],
        limit: int,
        largest: int,
        scopes: Iterable[str | None] | None = None,
    ) -> list[str]:
        """Paths of notes of at most `largest` bytes containing every one of `words`
        (candidates for a duplicate), of any scope or only of `scopes` (None among them: the
        global notes)."""
        if not words:
            return []
        terms = [f'"{w}"' for w in words]
        expression = " AND ".join(terms if scopes is None else [*terms, scopes_term(scopes)])
        rows = self.query(
            f"SELECT DISTINCT n.path FROM notes_fts JOIN notes n ON n.rowid = {NOTE_OF_ROW}"
            " WHERE notes_fts MATCH ? AND n.size <= ? LIMIT ?",
            (expression, largest, limit),
        )
        return [r[0] for r in rows]

    def outgoing(self, path: str) -> list[LinkRow]:
        return self._links("s.path = ?", path)

    def backlinks(self, path: str) -> list[LinkRow]:
        return self._links("t.path = ?", path)

    def _links(self, where: str, path: str) -> list[LinkRow]:
        rows = self.query(
            "SELECT s.path, s.id, s.title, l.raw, t.path, t.id, t.title, l.related FROM links l"
            " JOIN notes s ON s.rowid = l.source LEFT JOIN notes t ON t.rowid = l.target"
            f" WHERE {where} AND NOT l.attachment ORDER BY s.path, l.rowid",
            (path,),
        )
        return [LinkRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7])) for r in rows]

    def search(
        self, text: str, limit: int = 10, offset: int = 0, where: Filter = Filter()
    ) -> SearchPage:
        """Notes matching a query, best first: those with all the query's words, then those
        with any of them. The filter is part of the FTS5 query (see search/filters.py), so only the
        notes that pass are scored; the SQL comes from index/search_sql.py."""
        plan = search_plan(text, where)
        if plan is None or limit <= 0:
            return SearchPage([], 0)
        with self._borrowed("search"):
            return self._search(plan, limit, offset)

    def _search(self, plan: SearchPlan, limit: int, offset: int) -> SearchPage:
        now = clock.now_iso()
        wanted = max(offset, 0) + limit
        ranked = self._matches(plan, wanted, now)
        total = len(ranked)
        if total == wanted:
            total = int(self.query(*count_sql(plan.loose, plan.live, now, plan.period))[0][0])
        page = self.with_snippets(ranked[max(offset, 0) : wanted], plan.text)
        return SearchPage(self.hits(page, plan.text), total)

    def candidates(self, text: str, where: Filter, limit: int) -> list[Match]:
        """The best `limit` full-text matches in search order, for a hybrid search to fuse,
        without snippets: `with_snippets` makes those of the ones shown."""
        plan = search_plan(text, where)
        if plan is None or limit <= 0:
            return []
        with self._borrowed("search"):
            return self._matches(plan, limit, clock.now_iso())

    def with_snippets(self, page: list[Match], text: str) -> list[Match]:
        """The page's full-text matches for the query `text` with their sections' snippets,
        the query's words marked, made in a scratch table of those sections
        (search_sql.SHOWN_TABLES)."""
        sections = [match.section for match in page if match.section is not None]
        statement = shown_snippets_sql(text)
        if not sections or statement is None:
            return page
        scratch = self._page_table()
        rows = self.query(*shown_rows_sql(sections))
        with scratch:
            try:
                for insert in SHOWN_ROWS:
                    scratch.executemany(insert, rows)
                made = {
                    int(row[0]): snippet_text(row[1], row[2]) for row in scratch.execute(*statement)
                }
            finally:
                for emptied in SHOWN_EMPTIED:
                    scratch.execute(emptied)
        return [
            match
            if match.section is None
            else dataclasses.replace(match, snippet=made.get(match.section, ""))
            for match in page
        ]

    def _matches(self, plan: SearchPlan, wanted: int, now: str) -> list[Match]:
        ranked_strict, ranked_loose = plan.ranked
        if plan.strict == plan.loose:
            return self._ranked(search_sql(ranked_loose, plan.live, wanted, now, (), plan.period))
        # A note has the same bm25 in both queries (same phrases), so when fewer than a page
        # have every word, one ranking of the loose query puts those first: bm25's statistics
        # are gathered once, not once per pass.
        every = [
            int(r[0])
            for r in self.query(*matches_sql(plan.strict, plan.live, wanted, now, plan.period))
        ]
        first = () if len(every) == wanted else every
        expression = ranked_strict if len(every) == wanted else ranked_loose
        return self._ranked(search_sql(expression, plan.live, wanted, now, first, plan.period))

    def admitted(self, where: Filter) -> tuple[set[int] | None, set[int]]:
        """The notes `where` lets through, for a search that is not an FTS5 query (semantic):
        (only these, or None for every note) and the notes to leave out. The default filter
        leaves out the archived and expired few instead of naming every other note."""
        now = clock.now_iso()
        if where == Filter():
            return None, set(self.column(*left_out_sql(now)))
        statement = admitted_sql(where, now)
        if statement is None:
            conditions, params = filter_sql(where, now)
            statement = f"SELECT n.rowid FROM notes n WHERE 1 = 1{conditions}", params
        return set(self.column(*statement)), set()

    def _ranked(self, statement: Statement) -> list[Match]:
        return [
            Match(int(r[0]), float(r[1]), "", section=int(r[2])) for r in self.query(*statement)
        ]

    def passages(self, path: str, text: str, margin: int) -> list[str]:
        """Up to PASSAGES places where `text` stands in the body of the note at `path`, each
        with `margin` characters either side (at most a section's), as the index holds the
        body: a few sections read, never the file."""
        note = self.rowid(path)
        if note is None:
            return []
        wanted = fts_text(text)
        margin = min(margin, SECTION_CHARS)
        first, last = section_rowids(note)
        found: list[str] = []
        for rowid, body in self.query(*holding_sql(note, wanted, PASSAGES)):
            start = body.find(wanted)
            while start >= 0 and len(found) < PASSAGES:
                end = start + len(wanted)
                before = body[max(start - margin, 0) : start]
                after = body[end : end + margin]
                if len(before) < margin and rowid > first:
                    before = self._section(rowid - 1)[len(before) - margin :] + before
                if len(after) < margin and rowid < last:
                    after += self._section(rowid + 1)[: margin - len(after)]
                found.append(display_text(before + body[start:end] + after))
                start = body.find(wanted, start + 1)
        return found

    def _section(self, rowid: int) -> str:
        """The body text of one FTS row (a section of a note); empty when there is none."""
        rows = self.query(*shown_rows_sql([rowid]))
        return str(rows[0]["body"]) if rows else ""

    def hits(self, page: list[Match], query: str) -> list[SearchHit]:
        """The page's matches with what the index knows of each note, and their relevance to
        `query` (search/relevance.py): the share of its word groups each note holds, or its cosine
        similarity when higher."""
        if not page:
            return []
        groups = word_groups(query)
        held = self._groups_held(page, groups) if groups else Counter[int]()
        marks = ", ".join("?" for _ in page)
        rows = self.query(
            f"SELECT n.rowid AS hit, {_NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE n.rowid IN ({marks})",
            [match.rowid for match in page],
        )
        unsaved = self.uses.snapshot()
        notes = {int(row["hit"]): _note_row(row, unsaved) for row in rows}
        return [
            SearchHit(
                id=note.id,
                title=note.title,
                path=note.path,
                version=note.version,
                category=note.category,
                tags=note.tags,
                score=round(-match.rank, 4),
                snippet=match.snippet,
                updated_at=note.updated_at,
                last_reviewed=note.last_reviewed,
                scope=note.scope,
                age=note.age,
                relevance=relevance(held[match.rowid], len(groups), match.similarity),
                created_by=note.created_by,
                updated_by=note.updated_by,
            )
            for match in page
            if (note := notes.get(match.rowid)) is not None
        ]

    def share_held(self, rowid: int, query: str) -> float:
        """The share of `query`'s word groups note `rowid` holds (0..1), as relevance counts
        them: how far a hybrid search trusts a full-text ranking this note leads
        (search/fusion.py)."""
        groups = word_groups(query)
        if not groups:
            return 0.0
        return self._groups_held([Match(rowid, 0.0, "")], groups)[rowid] / len(groups)

    def _groups_held(self, page: list[Match], groups: list[str]) -> Counter[int]:
        """How many of the word groups each note of the page holds, matched in a scratch
        FTS5 table of the page's text (search_sql.PAGE_TABLE), the first RELEVANCE_CHARS
        characters of each note. Each thread keeps its table and empties it after each page:
        a new database and table for each search cost as much as the matching."""
        scratch = self._page_table()
        with scratch:
            try:
                for match in page:
                    budget = RELEVANCE_CHARS
                    for row in self.query(*sections_sql(match.rowid)):
                        if budget <= 0:
                            break
                        scratch.execute(PAGE_ROW, tuple(row))
                        budget -= len(row[4])
                return Counter(
                    int(found[0])
                    for group in groups
                    for found in scratch.execute(*page_held_sql(group))
                )
            finally:
                scratch.execute(PAGE_EMPTIED)

    def _page_table(self) -> sqlite3.Connection:
        """This thread's in-memory database holding the empty scratch table."""
        scratch: sqlite3.Connection | None = getattr(self._scratch, "db", None)
        if scratch is None:
            scratch = sqlite3.connect(":memory:")
            for table in (PAGE_TABLE, *SHOWN_TABLES):
                scratch.execute(table)
            self._scratch.db = scratch
        return scratch

    def list_notes(
        self, where: Filter = Filter(), sort: str = "updated", limit: int = 50, offset: int = 0
    ) -> tuple[list[NoteRow], int]:
        """A page of notes in the order asked for, and how many match in all."""
        order = SORTS.get(sort)
        if order is None:
            raise ValueError(f"unknown sort {sort!r}")
        sql_where, params = filter_sql(where, clock.now_iso())
        unsaved = self.uses.snapshot()
        # Sorted by use, the unsaved uses take part in the order.
        pending, pending_params = _unsaved_sql(unsaved if sort == "usage" else {})
        rows = self.query(
            f"{pending} SELECT {_NOTE_COLUMNS}, coalesce(u.access_count, 0) +"
            " coalesce(p.uses, 0) AS uses, max(coalesce(u.last_access, ''),"
            " coalesce(p.last, '')) AS used FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" LEFT JOIN pending p ON p.id = n.id WHERE 1 {sql_where} ORDER BY {order}"
            " LIMIT ? OFFSET ?",
            [*pending_params, *params, max(limit, 0), max(offset, 0)],
        )
        total = self.query(f"SELECT count(*) FROM notes n WHERE 1 {sql_where}", params)[0][0]
        return [_note_row(r, unsaved) for r in rows], int(total)

    def record_access(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (read, or returned by search or context): kept state,
        counted in memory and saved in batches on a thread of its own, so a read never
        writes."""
        self.uses.add(ids, clock.now_iso())
        if not self.uses.due(FLUSH_MEMORIES, FLUSH_SECONDS):
            return
        with self._pool_lock:
            if self._flusher is not None and self._flusher.is_alive():
                return
            self._flusher = threading.Thread(
                target=self.flush_usage, name="memvault-usage", daemon=True
            )
            self._flusher.start()

    def flush_usage(self) -> bool:
        """Save the uses counted in memory; False when that failed (disk full, read-only
        media), with one line on stderr the first time: the uses then stay counted in memory
        and are tried again with the next batch."""
        with self._flush_lock:
            taken = self.uses.take()
            if not taken:
                return True
            try:
                with self.transaction() as db:
                    db.executemany(
                        "INSERT INTO usage (id, access_count, last_access) VALUES (?, ?, ?)"
                        " ON CONFLICT(id) DO UPDATE SET access_count = access_count +"
                        " excluded.access_count, last_access = max(coalesce(last_access, ''),"
                        " excluded.last_access)",
                        [(memory_id, count, last) for memory_id, (count, last) in taken.items()],
                    )
            except (sqlite3.Error, OSError) as exc:
                self.uses.give_back(taken)
                if not self._flush_failing:
                    log.warning("usage counts kept in memory: cannot save them (%s)", exc)
                self._flush_failing = True
                return False
            self._flush_failing = False
            return True

    def usage(self) -> dict[str, Usage]:
        """Kept state for export, by memory id (the uses not saved yet included)."""
        rows = self.query("SELECT id, access_count, last_access FROM usage")
        saved: dict[str, Uses] = {r[0]: (int(r[1]), r[2] or "") for r in rows}
        for memory_id, uses in self.uses.snapshot().items():
            saved[memory_id] = merged(saved.get(memory_id), uses)
        return {i: Usage(count, last or None) for i, (count, last) in saved.items()}

    def restore_usage(self, memory_id: str, count: int, last_access: str | None) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO usage (id, access_count, last_access) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET access_count = max(access_count,"
                " excluded.access_count), last_access = max(coalesce(last_access, ''),"
                " coalesce(excluded.last_access, ''))",
                (memory_id, count, last_access),
            )

    def expired(self, now: str) -> list[str]:
        """Paths of memories past their `expires_at` that are not archived yet."""
        rows = self.query(
            "SELECT path FROM notes WHERE expires_at IS NOT NULL AND expires_at <= ?"
            f" AND NOT {ARCHIVED} ORDER BY path",
            (now,),
        )
        return [r[0] for r in rows]

    def unused(self, before: str) -> list[tuple[str, str | None]]:
        """(path, category) of the live memories last used, changed and made before `before`
        (none used since in this process either)."""
        unsaved = self.uses.snapshot()
        rows = self.query(
            "SELECT n.path, n.folder, n.id FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE NOT {ARCHIVED} AND max(coalesce(n.updated_at, ''),"
            " coalesce(n.created_at, ''), coalesce(u.last_access, '')) < ? ORDER BY n.path",
            (before,),
        )
        return [(r[0], r[1] or None) for r in rows if r[2] not in unsaved]

    def remember_append(self, memory_id: str, text: str) -> None:
        """Record that memvault appended `text` to a memory now (its first APPEND_CHARS
        characters), and forget the appends older than APPEND_DAYS or beyond APPENDS_KEPT."""
        kept = text.strip()[:APPEND_CHARS]
        if not kept:
            return
        now = clock.now()
        with self.transaction() as db:
            db.execute(
                "INSERT INTO appends (note_id, at, text) VALUES (?, ?, ?)",
                (memory_id, clock.iso(now), kept),
            )
            db.execute(
                "DELETE FROM appends WHERE at < ? OR rowid <= (SELECT max(rowid) FROM appends) - ?",
                (clock.iso(now - dt.timedelta(days=APPEND_DAYS)), APPENDS_KEPT),
            )

    def appends_since(self, since: str) -> list[tuple[int, str, str, str]]:
        """(record, path, when, text) of each append remembered since `since` to a memory the
        index holds (one row per file, when a copied file shares the id), oldest first."""
        rows = self.query(
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
        rows = self.query("SELECT rowid, text FROM appends WHERE note_id = ?", (memory_id,))
        gone = [(r[0],) for r in rows if r[1] in before and r[1] not in after]
        if gone:
            with self.transaction() as db:
                db.executemany("DELETE FROM appends WHERE rowid = ?", gone)

    def stats(self) -> Stats:
        """Counts by category, scope and tag; never-used memories; files and bytes."""

        def counts(sql: str) -> dict[str, int]:
            return {str(r[0]): int(r[1]) for r in self.query(sql)}

        def sizes(key: str) -> dict[str, int]:
            """Bytes of the notes by `key`, in the order of the counts (most notes first)."""
            return counts(
                f"SELECT {key}, coalesce(sum(size), 0) FROM notes GROUP BY 1"
                " ORDER BY count(*) DESC, 1"
            )

        unsaved = self.uses.snapshot()
        never = self.query(
            "SELECT n.path, n.id FROM notes n LEFT JOIN usage u ON u.id = n.id"
            " WHERE coalesce(u.access_count, 0) = 0 ORDER BY n.path"
        )
        totals = self.query("SELECT count(*), coalesce(sum(size), 0) FROM notes")[0]
        return Stats(
            memories=int(totals[0]),
            bytes=int(totals[1]),
            by_category=counts(
                f"SELECT {_CATEGORY_KEY}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            by_scope=counts(
                f"SELECT {_SCOPE_KEY}, count(*) FROM notes GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            by_tag=counts(
                "SELECT lower(tag), count(DISTINCT note) FROM tags GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            never_used=[r[0] for r in never if r[1] not in unsaved],
            bytes_by_category=sizes(_CATEGORY_KEY),
            bytes_by_scope=sizes(_SCOPE_KEY),
        )

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, target as written) of every link that resolves to no note."""
        rows = self.query(
            "SELECT s.path, l.raw FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE l.target IS NULL AND NOT l.attachment ORDER BY s.path, l.rowid"
        )
        return [(r[0], r[1]) for r in rows]

    def duplicate_ids(self) -> list[tuple[str, list[str]]]:
        rows = self.query(
            "SELECT id, group_concat(path, char(10)) FROM (SELECT id, path FROM notes ORDER BY"
            " path) GROUP BY id HAVING count(*) > 1"
        )
        return [(r[0], r[1].split("\n")) for r in rows]

    def problems(self) -> list[tuple[str, str]]:
        rows = self.query("SELECT path, problem FROM notes WHERE problem IS NOT NULL ORDER BY path")
        return [(r[0], r[1]) for r in rows]

    def ambiguous(self) -> list[tuple[str, str, list[str]]]:
        """(source, target as written, candidates) where a bare name fits several files."""
        rows = self.query(
            "SELECT s.path, l.raw, (SELECT group_concat(path, char(10)) FROM notes n"
            " WHERE n.stem_key = l.key) FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE NOT l.has_path AND NOT l.attachment AND l.target IS NOT NULL"
            " AND (SELECT count(*) FROM notes n WHERE n.stem_key = l.key) > 1"
        )
        return [(r[0], r[1], sorted(r[2].split("\n"))) for r in rows]

    def category_links(self) -> list[tuple[str, str, int]]:
        """(source folder, target folder, how many links) over every resolved link."""
        rows = self.query(
            "SELECT s.folder, t.folder, count(*) FROM links l JOIN notes s ON s.rowid = l.source"
            " JOIN notes t ON t.rowid = l.target WHERE NOT l.attachment GROUP BY 1, 2"
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    def fingerprint(self) -> str:
        """A short text that changes whenever a note is added, removed, moved or edited (what
        the web page polls to show changes made elsewhere without a reload)."""
        row = self.query(
            "SELECT count(*), coalesce(max(rowid), 0), coalesce(sum(mtime_ns % 1000000007), 0),"
            " coalesce(sum(length(path)), 0) FROM notes"
        )[0]
        return "-".join(str(value) for value in row)

    def related_pairs(self) -> list[tuple[str, str]]:
        """(source, target) for every resolved link in a `## Related` list."""
        rows = self.query(
            "SELECT DISTINCT s.path, t.path FROM links l JOIN notes s ON s.rowid = l.source"
            " JOIN notes t ON t.rowid = l.target WHERE l.related ORDER BY s.path, t.path"
        )
        return [(r[0], r[1]) for r in rows]


_NOTE_COLUMNS = (
    f"n.id, n.title, n.path, substr(n.hash, 1, {VERSION_LENGTH}) AS version,"
    " n.folder AS category, n.tags, n.created_at, n.updated_at,"
    " n.last_reviewed, n.scope, n.expires_at, coalesce(u.access_count, 0) AS access_count,"
    " u.last_access, n.problem, n.created_by, n.updated_by, n.superseded_by"
)


_ROW_FIELDS = [f.name for f in dataclasses.fields(NoteRow) if f.name != "age"]


def _note_row(row: sqlite3.Row, unsaved: dict[str, Uses]) -> NoteRow:
    """A row with _NOTE_COLUMNS as a record: those columns are NoteRow's fields but `age`;
    its uses not saved yet are added to the saved ones."""
    fields = {name: row[name] for name in _ROW_FIELDS}
    fields.update(category=fields["category"] or None, tags=json.loads(fields["tags"]))
    uses = unsaved.get(fields["id"])
    if uses is not None:
        count, last = merged((fields["access_count"], fields["last_access"] or ""), uses)
        fields.update(access_count=count, last_access=last)
    return NoteRow(**fields, age=clock.age(fields["updated_at"]))


def _unsaved_sql(unsaved: dict[str, Uses]) -> tuple[str, list[object]]:
    """A `pending (id, uses, last)` table of the uses not saved yet, as a WITH clause with
    one parameter (a JSON object), however many there are. GROUP BY makes SQLite build it
    once, with an index for the join, rather than read the JSON again for each note."""
    return (
        "WITH pending (id, uses, last) AS (SELECT key, json_extract(value, '$[0]'),"
        " json_extract(value, '$[1]') FROM json_each(?) GROUP BY key)",
        [json.dumps(unsaved)],
    )


def _delete(db: sqlite3.Connection, rowid: int) -> None:
    """Delete a note: aliases, tags and its links go by foreign key (links to it become
    NULL); the FTS table, virtual, has none."""
    db.execute("DELETE FROM notes WHERE rowid = ?", (rowid,))
    db.execute("DELETE FROM notes_fts WHERE rowid BETWEEN ? AND ?", section_rowids(rowid))
