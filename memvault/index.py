"""The SQLite index that mirrors the vault: notes, links, tags, aliases and full-text search.

It is derived data: `rebuild` makes it again from the files at any time. The one table it
keeps across rebuilds is `usage` (kept state, keyed by memory id).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import clock
from .document import parse_document
from .errors import MemvaultError
from .facets import ARCHIVE, filter_terms
from .markdown import Link
from .model import Memory, folder_of
from .records import (
    Filter,
    LinkRow,
    NoteRow,
    RebuildSummary,
    SearchHit,
    SearchPage,
    Skipped,
    Stats,
    SyncSummary,
    Usage,
)
from .rows import (
    NoteRows,
    file_rows,
    link_key,
    link_values,
    note_rows,
    workers,
)
from .search import display_text, parse_query
from .store import FileInfo, VaultStore, content_hash, memory_from

log = logging.getLogger(__name__)

SCHEMA_VERSION = 7
BATCH = 500
PARALLEL_FROM = 2000
PARALLEL_BATCH = 4000
# Workers yield the cores to the writer, which is the critical path: they parse ahead meanwhile.
NICE = 10
# bm25 weights for (title, aliases, tags, body, facets): a title match outranks a body match;
# facets (filters, see facets.py) never count.
WEIGHTS = (10.0, 6.0, 4.0, 1.0, 0.0)
_WEIGHTS = ", ".join(str(w) for w in WEIGHTS)

TABLES = """
CREATE TABLE notes (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL,             -- vault-relative, '/'-separated; unique (notes_path)
    path_key TEXT NOT NULL,         -- lower-case path without .md: target of [[folder/note]]
    stem_key TEXT NOT NULL,         -- lower-case file name without .md: target of [[note]]
    title_key TEXT NOT NULL,
    folder TEXT NOT NULL,           -- the category; '' at the vault root
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,             -- JSON list: frontmatter tags, then inline #tags
    created_at TEXT,
    updated_at TEXT,
    last_reviewed TEXT,
    scope TEXT,                     -- project, account or fleet; NULL for a global memory
    expires_at TEXT,                -- after this the memory moves to archive/
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    problem TEXT                    -- why memvault will not rewrite the file (broken YAML)
);
CREATE TABLE aliases (note INTEGER NOT NULL, alias TEXT NOT NULL, alias_key TEXT NOT NULL);
CREATE TABLE tags (note INTEGER NOT NULL, tag TEXT NOT NULL COLLATE NOCASE);
CREATE TABLE links (
    source INTEGER NOT NULL,
    folder TEXT NOT NULL,           -- the source's folder, to prefer the nearest target
    raw TEXT NOT NULL,              -- the target as written
    key TEXT NOT NULL,              -- lower-case lookup key, without .md
    name TEXT NOT NULL,             -- last path segment of key
    alt TEXT,                       -- markdown links: the target read from the vault root
    has_path INTEGER NOT NULL,
    attachment INTEGER NOT NULL,
    related INTEGER NOT NULL,       -- listed under ## Related (written by link_mem)
    target INTEGER                  -- resolved note, NULL while dangling
);
CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, aliases, tags, body, facets, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- FTS5 writes what a transaction indexed as a new segment each time its pending terms pass
-- `hashsize` (1 MB by default), and merges segments as they pile up: a rebuild with a larger
-- hashsize writes a few big segments instead of hundreds of small ones, and merges far less.
INSERT INTO notes_fts (notes_fts, rank) VALUES ('hashsize', 33554432);
"""

# A rebuild fills the tables first and sorts each index once at the end, which is several
# times faster than keeping every index up to date row by row. The notes and aliases indexes
# serve link resolution; the links indexes come after it, so resolving updates no index.
NOTE_INDEXES = """
CREATE UNIQUE INDEX notes_path ON notes(path);
CREATE INDEX notes_id ON notes(id);
CREATE INDEX notes_stem ON notes(stem_key, folder, path);
CREATE INDEX notes_path_key ON notes(path_key, folder, path);
CREATE INDEX notes_title ON notes(title_key, folder, path);
CREATE INDEX notes_updated ON notes(updated_at);
CREATE INDEX notes_scope ON notes(scope);
CREATE INDEX notes_folder ON notes(folder);
CREATE INDEX notes_expires ON notes(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX aliases_key ON aliases(alias_key);
CREATE INDEX aliases_note ON aliases(note);
CREATE INDEX tags_tag ON tags(tag, note);
CREATE INDEX tags_note ON tags(note);
"""
LINK_INDEXES = """
CREATE INDEX links_source ON links(source);
CREATE INDEX links_target ON links(target);
CREATE INDEX links_key ON links(key);
CREATE INDEX links_name ON links(name);
CREATE INDEX links_alt ON links(alt);
"""

_DERIVED_TABLES = ("notes", "aliases", "tags", "links", "notes_fts")

KEPT_STATE = """
CREATE TABLE IF NOT EXISTS usage (
    id TEXT PRIMARY KEY,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_access TEXT
);
"""

# Link resolution in DESIGN.md's order: exact path, path suffix, file stem, title, alias.
# Each tier fills only links still unresolved, so the first tier that matches wins; within a
# tier a note in the link's own folder wins, then the shortest path. (SQLite rejects a
# correlated ORDER BY here, hence the COALESCE of two lookups. The key indexes go on with
# folder and path, so the nearest-first lookup is one seek, not a walk of the folder.)
_TIERS = (
    ("{t}.has_path", "FROM notes n WHERE n.path_key = {t}.key"),
    ("{t}.alt IS NOT NULL", "FROM notes n WHERE n.path_key = {t}.alt"),
    (
        "{t}.has_path",
        "FROM notes n WHERE n.stem_key = {t}.name"
        " AND substr(n.path_key, -length({t}.key) - 1) = '/' || {t}.key",
    ),
    ("NOT {t}.has_path", "FROM notes n WHERE n.stem_key = {t}.key"),
    ("1", "FROM notes n WHERE n.title_key = {t}.key"),
    ("1", "FROM aliases a JOIN notes n ON n.rowid = a.note WHERE a.alias_key = {t}.key"),
)


def _tier_updates(table: str) -> list[str]:
    """One UPDATE per resolution tier for the links in `table` picked by a WHERE clause."""
    updates = []
    for condition, source in _TIERS:
        lookup = source.format(t=table)
        nearest = (
            f"coalesce((SELECT n.rowid {lookup} AND n.folder = {table}.folder"
            f" ORDER BY n.path LIMIT 1),"
            f" (SELECT n.rowid {lookup} ORDER BY length(n.path), n.path LIMIT 1))"
        )
        updates.append(
            f"UPDATE {table} SET target = {nearest} WHERE target IS NULL AND NOT attachment"
            f" AND {condition.format(t=table)} AND ({{where}})"
        )
    return updates


_LINK_TIERS = _tier_updates("links")
_PROBE_TIERS = _tier_updates("probe")


@dataclass
class _Match:
    """A note the full-text query ranked, with the snippet to show for it."""

    rowid: int
    rank: float
    snippet: str


@dataclass
class Changes:
    """What a walk found different from the index: files to read, paths gone, and folders or
    files it could not read."""

    changed: list[FileInfo]
    gone: list[str]
    skipped: list[Skipped]


Progress = Callable[[int, int], None]


class Index:
    """One SQLite file with the notes, their links and the FTS table; safe across threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._guard = threading.RLock()
        self.fresh = False
        self._db = self._open()

    def close(self) -> None:
        with self._guard:
            self._db.close()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db: sqlite3.Connection | None = None
        try:
            db = self._connect()
            version = db.execute("PRAGMA user_version").fetchone()[0]
            db.execute("SELECT rowid FROM notes_fts LIMIT 1").fetchone() if version else None
        except sqlite3.DatabaseError as exc:
            log.warning("index %s is unreadable (%s); rebuilding it", self.path, exc)
            if db is not None:
                db.close()
            self._discard()
            db = self._connect()
            version = 0
        if version != SCHEMA_VERSION:
            if version:
                log.warning("index schema %s is not %s; rebuilding it", version, SCHEMA_VERSION)
            self._create(db)
            self.fresh = True
        return db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA busy_timeout = 30000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _create(self, db: sqlite3.Connection) -> None:
        drops = "".join(f"DROP TABLE IF EXISTS {t};" for t in _DERIVED_TABLES)
        db.executescript(
            f"BEGIN IMMEDIATE; {drops} {TABLES} {NOTE_INDEXES} {LINK_INDEXES} {KEPT_STATE}"
            f" PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._guard:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _query(self, sql: str, params: Iterable[object] = ()) -> list[sqlite3.Row]:
        with self._guard:
            return self._db.execute(sql, tuple(params)).fetchall()

    # -- writing ---------------------------------------------------------------------------

    def upsert(self, path: str, text: str, info: FileInfo) -> Memory:
        """Index one file's text (after memvault wrote it, or a sync saw it change)."""
        memory = memory_from(path, parse_document(text), info.mtime_ns)
        with self._transaction() as db:
            self._replace(db, memory, info, text)
        return memory

    def remove(self, path: str) -> None:
        """Forget a file; links that pointed at it dangle (or find another note)."""
        with self._transaction() as db:
            self._drop(db, path)

    def _replace(self, db: sqlite3.Connection, memory: Memory, info: FileInfo, text: str) -> None:
        old = db.execute("SELECT rowid FROM notes WHERE path = ?", (memory.path,)).fetchone()
        if old is not None:
            self._delete_rows(db, old[0])
        rowid = self._insert(db, memory, info, text)
        self._resolve(db, *_affected(memory, rowid, old[0] if old else None))

    def _drop(self, db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT rowid FROM notes WHERE path = ?", (path,)).fetchone()
        if row is not None:
            self._delete_rows(db, row[0])
            self._resolve(db, "SELECT rowid FROM links WHERE target = ?", (row[0],))

    def refresh(self, store: VaultStore, path: str) -> str:
        """Bring one path up to date with the disk: 'added', 'updated', 'removed' or 'unchanged'.

        A file that exists but cannot be read keeps its entry (reported as 'skipped').
        """
        info = store.stat(path)
        state = self.file_state(path)
        if info is None:
            if state is None:
                return "unchanged"
            self.remove(path)
            return "removed"
        if state is not None and (state[0], state[1]) == (info.size, info.mtime_ns):
            return "unchanged"
        try:
            text = store.load(info)
        except MemvaultError:
            return "skipped"
        with self._transaction() as db:
            self._apply(db, info, text, state)
        return "added" if state is None else "updated"

    def _apply(
        self,
        db: sqlite3.Connection,
        info: FileInfo,
        text: str,
        state: tuple[int, int, str] | None,
    ) -> str:
        """Index a file the disk has changed; a mere touch (same hash) only records the stat."""
        if state is not None and state[2] == content_hash(text):
            db.execute(
                "UPDATE notes SET size = ?, mtime_ns = ? WHERE path = ?",
                (info.size, info.mtime_ns, info.path),
            )
            return "touched"
        self._replace(db, memory_from(info.path, parse_document(text), info.mtime_ns), info, text)
        return "added" if state is None else "updated"

    def changes(self, store: VaultStore) -> Changes:
        """What differs between the disk and the index, by size and mtime (no file is read).

        In a big vault a forked process walks half the folders meanwhile, unless this process
        runs other threads (a fork copies only the calling thread, with the others' locks).
        Files are compared as plain (path, size, mtime_ns) tuples, which FileInfo also is, by
        set operations; the helper's half crosses the pipe as plain tuples, which pickle fast.
        """
        helper = None
        big = (self._query("SELECT max(rowid) FROM notes")[0][0] or 0) >= PARALLEL_FROM
        with ExitStack() as stack:
            if big and threading.active_count() == 1:
                context = multiprocessing.get_context("fork")
                pool = stack.enter_context(ProcessPoolExecutor(1, context))
                helper = pool.submit(_walked, store.root, (1, 2))
            with self._guard:
                cursor = self._db.cursor()
                cursor.row_factory = None
                indexed: set[tuple[str, int, int]] = set(
                    cursor.execute("SELECT path, size, mtime_ns FROM notes")
                )
            skipped: list[Skipped] = []
            files: list[tuple[str, int, int]] = list(
                store.walk(skipped, (0, 2) if helper else (0, 1))
            )
            if helper is not None:
                more, more_skipped = helper.result()
                files += more
                skipped += more_skipped
        changed = [FileInfo._make(f) for f in files if f not in indexed]
        # Indexed states no file has now: each is a changed file's old state or a file gone.
        outdated = indexed.difference(files)
        kept = {f.path for f in changed}
        blocked = [s.path for s in skipped]
        gone = [p for p, _, _ in outdated if p not in kept and not _inside_any(p, blocked)]
        return Changes(changed, sorted(gone), skipped)

    def sync(self, store: VaultStore, found: Changes | None = None) -> SyncSummary:
        """Index only what changed on disk since the last pass: size and mtime first, then hash.

        A file renamed outside memvault keeps its kept state (same id, or same content for a
        note without an id). A file or folder that cannot be read is reported, never deleted.
        `found` is what `changes` returned just before, when the caller has it already.
        """
        started = time.perf_counter()
        if found is None:
            found = self.changes(store)
        summary = SyncSummary(skipped=list(found.skipped))
        changed, gone = found.changed, found.gone
        with self._transaction() as db:
            new_ids: dict[str, str] = {}
            for info in changed:
                try:
                    text = store.load(info)
                except MemvaultError as exc:
                    summary.skipped.append(Skipped(info.path, str(exc)))
                    continue
                outcome = self._apply(db, info, text, _state(db, info.path))
                if outcome == "added":
                    summary.added += 1
                    new_ids[content_hash(text)] = info.path
                elif outcome == "updated":
                    summary.updated += 1
            for path in gone:
                old = db.execute("SELECT hash, id FROM notes WHERE path = ?", (path,)).fetchone()
                if old is None:
                    continue
                moved_to = new_ids.pop(old[0], None)
                if moved_to is None:
                    summary.removed += 1
                else:
                    summary.moved += 1
                    summary.added -= 1
                    row = db.execute("SELECT id FROM notes WHERE path = ?", (moved_to,)).fetchone()
                    db.execute("UPDATE OR IGNORE usage SET id = ? WHERE id = ?", (row[0], old[1]))
                self._drop(db, path)
        summary.seconds = time.perf_counter() - started
        return summary

    def rebuild(self, store: VaultStore, progress: Progress | None = None) -> RebuildSummary:
        """Make the index again from every file in the vault, in one transaction."""
        started = time.perf_counter()
        summary = RebuildSummary()
        files = list(store.walk(summary.skipped))
        with self._transaction() as db:
            for table in _DERIVED_TABLES:
                db.execute(f"DROP TABLE {table}")
            _script(db, TABLES)
            jobs = [(str(store.root), f.path, f.size, f.mtime_ns) for f in files]
            for done, rows in enumerate(_parsed(jobs), start=1):
                if isinstance(rows, Skipped):
                    summary.skipped.append(rows)
                    continue
                if rows.problem:
                    path = str(rows.note[0])
                    summary.skipped.append(Skipped(path, f"indexed read-only: {rows.problem}"))
                self._write(db, rows)
                summary.notes += 1
                if progress is not None and (done % BATCH == 0 or done == len(files)):
                    progress(done, len(files))
            # One segment: each term of a query is then one b-tree seek, not one per segment.
            db.execute("INSERT INTO notes_fts (notes_fts) VALUES ('optimize')")
            _script(db, NOTE_INDEXES)
            self._resolve(db, "1", ())
            _script(db, LINK_INDEXES)
        self.fresh = False
        summary.links, summary.unresolved_links, summary.attachments = self.link_counts()
        summary.seconds = time.perf_counter() - started
        return summary

    def _insert(self, db: sqlite3.Connection, memory: Memory, info: FileInfo, text: str) -> int:
        return self._write(db, note_rows(memory, info, text))

    def _write(self, db: sqlite3.Connection, rows: NoteRows) -> int:
        cursor = db.execute(
            "INSERT INTO notes (path, path_key, stem_key, title_key, folder, id, title, tags,"
            " created_at, updated_at, last_reviewed, scope, expires_at, size, mtime_ns, hash,"
            " problem) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            "INSERT INTO links (source, folder, raw, key, name, alt, has_path, attachment,"
            " related) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(rowid, *link) for link in rows.links],
        )
        db.execute(
            "INSERT INTO notes_fts (rowid, title, aliases, tags, body, facets)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (rowid, *rows.fts),
        )
        return rowid

    def _delete_rows(self, db: sqlite3.Connection, rowid: int) -> None:
        for sql in (
            "DELETE FROM notes WHERE rowid = ?",
            "DELETE FROM aliases WHERE note = ?",
            "DELETE FROM tags WHERE note = ?",
            "DELETE FROM links WHERE source = ?",
            "DELETE FROM notes_fts WHERE rowid = ?",
        ):
            db.execute(sql, (rowid,))

    def _resolve(self, db: sqlite3.Connection, where: str, params: tuple[object, ...]) -> None:
        """Resolve the links `where` picks, tier by tier; what stays NULL is dangling.

        The picked rowids go to a temp table first: each part of `where` (joined by UNION)
        then uses its own index, where one OR'ed WHERE would scan every link.
        """
        if where == "1":
            picked = "1"
        else:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS pending (link INTEGER PRIMARY KEY)")
            db.execute("DELETE FROM temp.pending")
            db.execute(f"INSERT OR IGNORE INTO temp.pending {where}", params)
            picked = "rowid IN temp.pending"
        db.execute(f"UPDATE links SET target = NULL WHERE target IS NOT NULL AND {picked}")
        for sql in _LINK_TIERS:
            db.execute(sql.format(where=picked))

    # -- reading ---------------------------------------------------------------------------

    def link_counts(self) -> tuple[int, int, int]:
        """(links between notes, of which unresolved, links to attachments)."""
        row = self._query(
            "SELECT count(*) FILTER (WHERE NOT attachment),"
            " count(*) FILTER (WHERE NOT attachment AND target IS NULL),"
            " count(*) FILTER (WHERE attachment) FROM links"
        )[0]
        return int(row[0]), int(row[1]), int(row[2])

    def note_count(self) -> int:
        return int(self._query("SELECT count(*) FROM notes")[0][0])

    def file_state(self, path: str) -> tuple[int, int, str] | None:
        """(size, mtime_ns, hash) recorded for a file, or None if it is not indexed."""
        with self._guard:
            return _state(self._db, path)

    def resolve(self, identifier: str) -> list[str]:
        """Paths of the memories an identifier names exactly, by the first rule that matches:
        id, relative path, file stem, title, alias (all but the id case-insensitive)."""
        ident = identifier.strip()
        key = link_key(ident)
        for sql, value in (
            ("SELECT path FROM notes WHERE id = ? ORDER BY path", ident),
            ("SELECT path FROM notes WHERE path_key = ? ORDER BY path", key),
            ("SELECT path FROM notes WHERE stem_key = ? ORDER BY length(path), path", key),
            (
                "SELECT path FROM notes WHERE title_key = ? ORDER BY length(path), path",
                ident.lower(),
            ),
            (
                "SELECT DISTINCT n.path FROM aliases a JOIN notes n ON n.rowid = a.note"
                " WHERE a.alias_key = ? ORDER BY n.path",
                ident.lower(),
            ),
        ):
            rows = self._query(sql, (value,))
            if rows:
                return [r[0] for r in rows]
        return []

    def resolve_link(self, source: str, link: Link) -> str | None:
        """The path a link in `source` resolves to, by the same rules as the bulk resolution."""
        row = (0, *link_values(folder_of(source), link, False))
        if row[7]:
            return None
        with self._transaction() as db:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS probe AS SELECT * FROM links WHERE 0")
            db.execute("DELETE FROM probe")
            db.execute(
                "INSERT INTO probe (source, folder, raw, key, name, alt, has_path,"
                " attachment, related) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            for sql in _PROBE_TIERS:
                db.execute(sql.format(where="1"))
            found = db.execute(
                "SELECT n.path FROM probe p JOIN notes n ON n.rowid = p.target"
            ).fetchone()
        return found[0] if found else None

    def note(self, path: str) -> NoteRow | None:
        rows = self._query(
            f"SELECT {_NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id WHERE path = ?",
            (path,),
        )
        return _note_row(rows[0]) if rows else None

    def has_id(self, memory_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM notes WHERE id = ? LIMIT 1", (memory_id,)))

    def stem_taken(self, stem: str) -> bool:
        return bool(self._query("SELECT 1 FROM notes WHERE stem_key = ?", (stem.lower(),)))

    def names(self, where: Filter = Filter(archived=None)) -> list[tuple[str, str]]:
        """(path, name) for every title, file name and alias, for fuzzy recall."""
        sql_where, params = _filters(where)
        rows = self._query(
            f"SELECT path, title FROM notes n WHERE 1 {sql_where}"
            f" UNION ALL SELECT path, stem_key FROM notes n WHERE 1 {sql_where}"
            " UNION ALL SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.rowid = a.note"
            f" WHERE 1 {sql_where}",
            params * 3,
        )
        return [(r[0], r[1]) for r in rows]

    def with_all_words(self, words: list[str], limit: int) -> list[str]:
        """Paths of notes containing every one of `words` (candidates for a duplicate)."""
        if not words:
            return []
        expression = " AND ".join(f'"{w}"' for w in words)
        rows = self._query(
            "SELECT n.path FROM notes_fts JOIN notes n ON n.rowid = notes_fts.rowid"
            " WHERE notes_fts MATCH ? LIMIT ?",
            (expression, limit),
        )
        return [r[0] for r in rows]

    def outgoing(self, path: str) -> list[LinkRow]:
        return self._links("s.path = ?", path)

    def backlinks(self, path: str) -> list[LinkRow]:
        return self._links("t.path = ?", path)

    def _links(self, where: str, path: str) -> list[LinkRow]:
        rows = self._query(
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
        with any of them. The filter is part of the FTS5 query (see facets.py), so only the
        notes that pass are scored."""
        query = parse_query(text)
        if query.empty or limit <= 0:
            return SearchPage([], 0)
        required, excluded = filter_terms(
            where.category, where.tags, where.scope, where.only_scope, where.archived
        )
        strict, loose = (_filtered(e, required, excluded) for e in (query.strict(), query.loose()))
        live = where.archived is False
        wanted = max(offset, 0) + limit
        if strict == loose:
            ranked = self._ranked(loose, live, wanted)
        else:
            # A note has the same bm25 in both queries (same phrases), so when fewer than a
            # page have every word, one ranking of the loose query puts those first: bm25's
            # statistics are gathered once, not once per pass.
            every = self._matches(strict, live, wanted)
            if len(every) == wanted:
                ranked = self._ranked(strict, live, wanted)
            else:
                ranked = self._ranked(loose, live, wanted, first=every)
        total = len(ranked)
        if total == wanted:
            matching, params = _matching(loose, live)
            total = int(
                self._query(f"SELECT count(*) FROM notes_fts WHERE {matching}", params)[0][0]
            )
        return SearchPage(self._hits(ranked[max(offset, 0) : wanted]), total)

    def _matches(self, expression: str, live: bool, limit: int) -> list[int]:
        """Up to `limit` rowids of the notes matching `expression`, unranked."""
        matching, params = _matching(expression, live)
        rows = self._query(
            f"SELECT rowid FROM notes_fts WHERE {matching} LIMIT ?", [*params, limit]
        )
        return [int(r[0]) for r in rows]

    def _ranked(
        self, expression: str, live: bool, limit: int, first: list[int] | None = None
    ) -> list[_Match]:
        """The best `limit` matches with their bm25 and snippets, the notes in `first` ahead of
        the rest; `live` leaves out expired memories. SQLite computes the snippets only for
        rows that enter the best `limit`."""
        matching, params = _matching(expression, live)
        # One JSON parameter, not one per rowid: a deep page may hold more than SQLite's limit
        # of parameters.
        order = "rowid IN (SELECT value FROM json_each(?)) DESC, rank" if first else "rank"
        rows = self._query(
            f"SELECT rowid, bm25(notes_fts, {_WEIGHTS}) AS rank,"
            f" snippet(notes_fts, 3, '{_OPEN}', '{_CLOSE}', '…', 16),"
            f" snippet(notes_fts, 0, '{_OPEN}', '{_CLOSE}', '…', 16) FROM notes_fts"
            f" WHERE {matching} ORDER BY {order} LIMIT ?",
            [*params, *([json.dumps(first)] if first else []), limit],
        )
        return [_Match(int(r[0]), float(r[1]), _snippet(r[2], r[3])) for r in rows]

    def _hits(self, page: list[_Match]) -> list[SearchHit]:
        """The page's matches with what the index knows of each note."""
        if not page:
            return []
        marks = ", ".join("?" for _ in page)
        rows = self._query(
            f"SELECT n.rowid AS hit, {_NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE n.rowid IN ({marks})",
            [match.rowid for match in page],
        )
        notes = {int(row["hit"]): _note_row(row) for row in rows}
        return [
            SearchHit(
                id=note.id,
                title=note.title,
                path=note.path,
                category=note.category,
                tags=note.tags,
                score=round(-match.rank, 4),
                snippet=match.snippet,
                updated_at=note.updated_at,
                last_reviewed=note.last_reviewed,
                scope=note.scope,
                age=note.age,
            )
            for match in page
            if (note := notes.get(match.rowid)) is not None
        ]

    def list_notes(
        self, where: Filter = Filter(), sort: str = "updated", limit: int = 50, offset: int = 0
    ) -> tuple[list[NoteRow], int]:
        """A page of notes in the order asked for, and how many match in all."""
        order = SORTS.get(sort)
        if order is None:
            raise ValueError(f"unknown sort {sort!r}")
        sql_where, params = _filters(where)
        rows = self._query(
            f"SELECT {_NOTE_COLUMNS} FROM notes n LEFT JOIN usage u ON u.id = n.id"
            f" WHERE 1 {sql_where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, max(limit, 0), max(offset, 0)],
        )
        total = self._query(f"SELECT count(*) FROM notes n WHERE 1 {sql_where}", params)[0][0]
        return [_note_row(r) for r in rows], int(total)

    def record_access(self, ids: Iterable[str]) -> None:
        """Count one use of each memory (read, or returned by search or context): kept state."""
        unique = sorted(set(ids))
        if not unique:
            return
        now = clock.now_iso()
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO usage (id, access_count, last_access) VALUES (?, 1, ?)"
                " ON CONFLICT(id) DO UPDATE SET access_count = access_count + 1,"
                " last_access = excluded.last_access",
                [(i, now) for i in unique],
            )

    def usage(self) -> dict[str, Usage]:
        """Kept state for export, by memory id."""
        rows = self._query("SELECT id, access_count, last_access FROM usage")
        return {r[0]: Usage(int(r[1]), r[2]) for r in rows}

    def restore_usage(self, memory_id: str, count: int, last_access: str | None) -> None:
        """Set a memory's kept state (import), never lowering a count already here."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO usage (id, access_count, last_access) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET access_count = max(access_count,"
                " excluded.access_count), last_access = max(coalesce(last_access, ''),"
                " coalesce(excluded.last_access, ''))",
                (memory_id, count, last_access),
            )

    def expired(self, now: str) -> list[str]:
        """Paths of memories past their `expires_at` that are not archived yet."""
        rows = self._query(
            "SELECT path FROM notes WHERE expires_at IS NOT NULL AND expires_at <= ?"
            f" AND NOT {_ARCHIVED} ORDER BY path",
            (now,),
        )
        return [r[0] for r in rows]

    def stats(self) -> Stats:
        """Counts by category, scope and tag; never-used memories; files and bytes."""

        def counts(sql: str) -> dict[str, int]:
            return {str(r[0]): int(r[1]) for r in self._query(sql)}

        never = self._query(
            "SELECT n.path FROM notes n LEFT JOIN usage u ON u.id = n.id"
            " WHERE coalesce(u.access_count, 0) = 0 ORDER BY n.path"
        )
        totals = self._query("SELECT count(*), coalesce(sum(size), 0) FROM notes")[0]
        return Stats(
            memories=int(totals[0]),
            bytes=int(totals[1]),
            by_category=counts(
                "SELECT CASE folder WHEN '' THEN '(none)' ELSE folder END, count(*) FROM notes"
                " GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            by_scope=counts(
                "SELECT coalesce(scope, '(global)'), count(*) FROM notes GROUP BY 1"
                " ORDER BY 2 DESC, 1"
            ),
            by_tag=counts(
                "SELECT lower(tag), count(DISTINCT note) FROM tags GROUP BY 1 ORDER BY 2 DESC, 1"
            ),
            never_used=[r[0] for r in never],
        )

    def dangling(self) -> list[tuple[str, str]]:
        """(source path, target as written) of every link that resolves to no note."""
        rows = self._query(
            "SELECT s.path, l.raw FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE l.target IS NULL AND NOT l.attachment ORDER BY s.path, l.rowid"
        )
        return [(r[0], r[1]) for r in rows]

    def duplicate_ids(self) -> list[tuple[str, list[str]]]:
        rows = self._query(
            "SELECT id, group_concat(path, char(10)) FROM (SELECT id, path FROM notes ORDER BY"
            " path) GROUP BY id HAVING count(*) > 1"
        )
        return [(r[0], r[1].split("\n")) for r in rows]

    def problems(self) -> list[tuple[str, str]]:
        rows = self._query(
            "SELECT path, problem FROM notes WHERE problem IS NOT NULL ORDER BY path"
        )
        return [(r[0], r[1]) for r in rows]

    def ambiguous(self) -> list[tuple[str, str, list[str]]]:
        """(source, target as written, candidates) where a bare name fits several files."""
        rows = self._query(
            "SELECT s.path, l.raw, (SELECT group_concat(path, char(10)) FROM notes n"
            " WHERE n.stem_key = l.key) FROM links l JOIN notes s ON s.rowid = l.source"
            " WHERE NOT l.has_path AND NOT l.attachment AND l.target IS NOT NULL"
            " AND (SELECT count(*) FROM notes n WHERE n.stem_key = l.key) > 1"
        )
        return [(r[0], r[1], sorted(r[2].split("\n"))) for r in rows]

    def related_pairs(self) -> list[tuple[str, str]]:
        """(source, target) for every resolved link in a `## Related` list."""
        rows = self._query(
            "SELECT DISTINCT s.path, t.path FROM links l JOIN notes s ON s.rowid = l.source"
            " JOIN notes t ON t.rowid = l.target WHERE l.related ORDER BY s.path, t.path"
        )
        return [(r[0], r[1]) for r in rows]


_NOTE_COLUMNS = (
    "n.id, n.title, n.path, n.folder, n.tags, n.created_at, n.updated_at, n.last_reviewed,"
    " n.scope, n.expires_at, coalesce(u.access_count, 0) AS access_count, u.last_access,"
    " n.problem"
)
_ARCHIVED = f"(folder = '{ARCHIVE}' OR substr(folder, 1, {len(ARCHIVE) + 1}) = '{ARCHIVE}/')"
# Snippet highlight marks no text contains, turned into ** once the best snippet is chosen.
_OPEN, _CLOSE = "\x02", "\x03"
SORTS = {
    "updated": "n.updated_at DESC, n.path",
    "created": "n.created_at DESC, n.path",
    "title": "n.title_key, n.path",
    "usage": "access_count DESC, u.last_access DESC, n.path",
    "reviewed": "coalesce(n.last_reviewed, n.created_at, n.updated_at), n.path",
}


def _note_row(row: sqlite3.Row) -> NoteRow:
    return NoteRow(
        id=row["id"],
        title=row["title"],
        path=row["path"],
        category=row["folder"] or None,
        tags=json.loads(row["tags"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        last_reviewed=row["last_reviewed"],
        scope=row["scope"],
        expires_at=row["expires_at"],
        access_count=int(row["access_count"]),
        last_access=row["last_access"],
        age=clock.age(row["updated_at"]),
        problem=row["problem"],
    )


def _filters(filter: Filter) -> tuple[str, list[object]]:
    """SQL conditions (each starting with AND) and their parameters for a Filter."""
    archived = _ARCHIVED.replace("folder", "n.folder")
    params: list[object] = []
    if filter.archived is None:
        where = ""
    elif filter.archived:
        where = f" AND {archived}"
    else:
        where = f" AND NOT {archived} AND (n.expires_at IS NULL OR n.expires_at > ?)"
        params.append(clock.now_iso())
    if filter.scope:
        where += " AND (n.scope = ? COLLATE NOCASE" + (
            ")" if filter.only_scope else " OR n.scope IS NULL)"
        )
        params.append(filter.scope)
    category = filter.category
    tags = filter.tags
    if category:
        folder = category.strip("/").lower()
        where += " AND (lower(n.folder) = ? OR substr(lower(n.folder), 1, ?) = ?)"
        params += [folder, len(folder) + 1, folder + "/"]
    for tag in tags or []:
        tag = tag.strip().lstrip("#")
        where += (
            " AND n.rowid IN (SELECT note FROM tags WHERE tag = ?"
            " OR substr(tag, 1, ?) = ? COLLATE NOCASE)"
        )
        params += [tag, len(tag) + 1, tag + "/"]
    return where, params


def _parsed(jobs: list[tuple[str, str, int, int]]) -> Iterator[NoteRows | Skipped]:
    """Each file's rows, in order. Big vaults are parsed by worker processes a batch ahead of
    the writer, so parsing and SQLite share the cores and memory stays bounded by two batches.
    The workers are forked: a rebuild runs before any of memvault's threads start, and fork
    needs no `if __name__ == "__main__"` guard in a script that calls the library. If a worker
    dies, the rest is parsed here, in this process."""
    count = workers()
    if count == 0 or len(jobs) < PARALLEL_FROM:
        yield from map(file_rows, jobs)
        return
    done = 0
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(count, context, os.nice, (NICE,)) as pool:
            batches = [jobs[i : i + PARALLEL_BATCH] for i in range(0, len(jobs), PARALLEL_BATCH)]
            pending = pool.map(file_rows, batches[0], chunksize=64)
            for following in [*batches[1:], None]:
                current = pending
                if following is not None:
                    pending = pool.map(file_rows, following, chunksize=64)
                for rows in current:
                    done += 1
                    yield rows
    except BrokenProcessPool:
        log.warning("a parsing worker died; parsing the remaining %d files here", len(jobs) - done)
        yield from map(file_rows, jobs[done:])


def _snippet(body: str | None, title: str | None) -> str:
    """The body's snippet, or the title's when only the title has the query's words."""
    chosen = body or ""
    if _OPEN not in chosen and _OPEN in (title or ""):
        chosen = title or ""
    return display_text(chosen.replace(_OPEN, "**").replace(_CLOSE, "**"))


def _walked(root: Path, share: tuple[int, int]) -> tuple[list[tuple[str, int, int]], list[Skipped]]:
    """One share of a walk of the vault at `root` (run by a helper process), as plain tuples:
    they pickle several times faster than FileInfo, whose class pickle calls per file."""
    skipped: list[Skipped] = []
    return [(f.path, f.size, f.mtime_ns) for f in VaultStore(root).walk(skipped, share)], skipped


def changes_on_disk(root: Path, index_path: Path) -> Changes:
    """`Index.changes` for the vault at `root` and an existing index: a module-level function
    of plain values, so another process can run it (the server does while it imports)."""
    index = Index(index_path)
    try:
        return index.changes(VaultStore(root))
    finally:
        index.close()


def _state(db: sqlite3.Connection, path: str) -> tuple[int, int, str] | None:
    """(size, mtime_ns, hash) recorded for a file, or None if it is not indexed."""
    row = db.execute("SELECT size, mtime_ns, hash FROM notes WHERE path = ?", (path,)).fetchone()
    return (int(row[0]), int(row[1]), str(row[2])) if row else None


def _matching(expression: str, live: bool) -> tuple[str, list[object]]:
    """The WHERE clause, and its parameters, for the FTS rows matching `expression`; `live`
    leaves out memories past their expiry that are not archived yet (few, found by index)."""
    if not live:
        return "notes_fts MATCH ?", [expression]
    expired = "SELECT rowid FROM notes WHERE expires_at <= ?"
    return f"notes_fts MATCH ? AND rowid NOT IN ({expired})", [expression, clock.now_iso()]


def _filtered(expression: str, required: list[str], excluded: str | None) -> str:
    """A query's FTS5 expression with the filter's terms. Its words cannot match the facets
    column (see facets.py), so they need no column filter."""
    combined = f"({expression})"
    for term in required:
        combined = f"({combined}) AND ({term})"
    return f"({combined}) NOT ({excluded})" if excluded else combined


def _script(db: sqlite3.Connection, statements: str) -> None:
    """Run SQL statements inside the caller's transaction (executescript would commit it)."""
    pending = ""
    for line in statements.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            db.execute(pending)
            pending = ""


def _affected(memory: Memory, rowid: int, old: int | None) -> tuple[str, tuple[object, ...]]:
    """Which links to resolve again after a note changed: its own, and those that may name it."""
    keys = {link_key(memory.path), memory.stem.lower(), memory.title.lower()}
    keys |= {a.lower() for a in memory.aliases}
    marks = ", ".join("?" for _ in keys)
    where = " UNION ".join(
        f"SELECT rowid FROM links WHERE {condition}"
        for condition in ("source = ?", "target = ?", f"key IN ({marks})", "name = ?", "alt = ?")
    )
    return where, (
        rowid,
        old if old is not None else -1,
        *keys,
        memory.stem.lower(),
        link_key(memory.path),
    )


def _inside_any(path: str, folders: list[str]) -> bool:
    """Whether `path` is one of `folders` or lies below one of them ('.' is the whole vault)."""
    return any(f in (".", path) or path.startswith(f + "/") for f in folders)
